/**
 * A keyed t3_dispatch retried after its thread was deleted (through t3_delete, or on T3 by
 * another client): a tool error naming the key and the thread, saying to pass a new key, with
 * no command sent to T3 and nothing recorded; a new key then works (MCP client → server → sim).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { callTool, type Stack, startStack, until } from "../helpers/stack.ts";

type Dispatched = { thread_id: string; forked_from: string | null };

let stack: Stack;
let client: Client;
beforeAll(async () => {
	stack = await startStack({ machines: [{ name: "demo", sim: {} }] });
	client = await stack.client();
});
afterAll(async () => {
	await stack.stop();
});

const commandsSent = () =>
	stack.sim("demo").stats().requests["orchestration.dispatchCommand"] ?? 0;

async function settled(args: Record<string, unknown>): Promise<string> {
	const d = await callTool<Dispatched>(client, "t3_dispatch", args);
	expect([d.isError, d.text]).toEqual([false, expect.any(String)]);
	const w = await callTool(client, "t3_wait", {
		thread_id: d.data.thread_id,
		timeout: 20,
	});
	expect(w.data).toMatchObject({ outcome: "completed" });
	return d.data.thread_id;
}

/** Deletes through t3_delete, or as another T3 client would. */
async function deleteThread(threadId: string, how: "t3_delete" | "on T3") {
	if (how === "t3_delete") {
		const del = await callTool(client, "t3_delete", { thread_id: threadId });
		expect(del.isError).toBe(false);
	} else {
		stack.sim("demo").deleteThread(threadId);
		// Until the connector's view of the machine has it gone.
		await until(async () => {
			const t = await callTool(client, "t3_thread", { thread_id: threadId });
			return t.isError;
		});
	}
}

/** The retry is refused clearly, sends nothing, and the key stays refused; a new key works. */
async function expectGone(
	args: Record<string, unknown>,
	key: string,
	threadId: string,
) {
	const before = commandsSent();
	for (let i = 0; i < 2; i++) {
		const retry = await callTool(client, "t3_dispatch", args);
		expect([retry.isError, retry.text]).toEqual([
			true,
			`idempotency_key "${key}" was used for thread ${threadId}, which no longer exists (deleted); pass a new idempotency_key to create another.`,
		]);
	}
	expect(commandsSent()).toBe(before);
	const fresh = await callTool<Dispatched>(client, "t3_dispatch", {
		...args,
		idempotency_key: `${key}-new`,
	});
	expect([fresh.isError, fresh.text]).toEqual([false, expect.any(String)]);
	expect(fresh.data.thread_id).not.toBe(threadId);
	return fresh.data;
}

describe("a keyed dispatch whose thread was deleted", () => {
	test("continuation keyed under request_id, deleted: the error names request_id", async () => {
		const threadId = await settled({
			machine: "demo",
			project: "demo",
			prompt: "say hello",
		});
		const args = { thread_id: threadId, prompt: "again", request_id: "cont" };
		await settled(args);
		await deleteThread(threadId, "t3_delete");
		const before = commandsSent();
		const retry = await callTool(client, "t3_dispatch", args);
		expect([retry.isError, retry.text]).toEqual([
			true,
			`request_id "cont" was used for thread ${threadId}, which no longer exists (deleted); pass a new request_id to create another.`,
		]);
		expect(commandsSent()).toBe(before);
	});

	for (const how of ["t3_delete", "on T3"] as const) {
		test(`new thread, deleted (${how}): retry refused with what to do`, async () => {
			const key = `plain-${how}`;
			const args = {
				machine: "demo",
				project: "demo",
				prompt: "say hello",
				idempotency_key: key,
			};
			const threadId = await settled(args);
			await deleteThread(threadId, how);
			await expectGone(args, key, threadId);
		});

		test(`fork, deleted (${how}) after its message was sent: retry refused`, async () => {
			const source = await settled({
				machine: "demo",
				project: "demo",
				prompt: "the word is pineapple",
			});
			const key = `fork-${how}`;
			const args = {
				fork_of: source,
				prompt: "remember?",
				idempotency_key: key,
			};
			const fork = await settled(args);
			await deleteThread(fork, how);
			const fresh = await expectGone(args, key, fork);
			expect(fresh.forked_from).toBe(source);
		});

		test(`fork, deleted (${how}) before its message went through: retry refused`, async () => {
			const source = await settled({
				machine: "demo",
				project: "demo",
				prompt: "the word is pineapple",
			});
			const key = `fork-refused-${how}`;
			const args = {
				fork_of: source,
				prompt: "remember?",
				idempotency_key: key,
			};
			const sim = stack.sim("demo");
			const known = new Set(sim.threadIds());
			sim.refuseNextCommand("message.dispatch");
			const refused = await callTool(client, "t3_dispatch", args);
			expect(refused.isError).toBe(true);
			const fork = sim.threadIds().find((id) => !known.has(id)) as string;
			expect(fork).toBeString();
			await deleteThread(fork, how);
			await expectGone(args, key, fork);
		});
	}
});
