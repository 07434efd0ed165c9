/**
 * docs/people.md's example chat bot, run as written: it takes a signed `approval.requested` and
 * posts the link to the chat with the agent's text made plain, refuses an unsigned body, and
 * reports `approval.settled`. The code block is taken from the page itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { Webhook } from "standardwebhooks";
import { TEST_SECRET } from "../helpers/receiver.ts";
import { until } from "../helpers/stack.ts";

const ROOT = join(import.meta.dir, "../..");

/** The page's one TypeScript block, unindented. */
function botSource(): string {
	const page = readFileSync(join(ROOT, "docs/people.md"), "utf8");
	const block = /^( *)```ts\n([\s\S]*?)^\1```/m.exec(page);
	if (!block) throw new Error("docs/people.md has no ```ts block");
	const indent = block[1] ?? "";
	return (block[2] ?? "")
		.split("\n")
		.map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
		.join("\n");
}

let dir: string;
let bot: Subprocess;
let botUrl: string;
const posted: string[] = [];
let chat: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
	chat = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		async fetch(req) {
			posted.push(await req.text());
			return new Response("ok");
		},
	});
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-people-bot-"));
	symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
	writeFileSync(join(dir, "people-bot.ts"), botSource());
	// A free port: taken from the system, then handed to the bot.
	const probe = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch: () => new Response(),
	});
	const port = probe.port;
	probe.stop(true);
	botUrl = `http://127.0.0.1:${port}/`;
	bot = Bun.spawn([process.execPath, "people-bot.ts"], {
		cwd: dir,
		env: {
			PATH: process.env.PATH ?? "",
			PEOPLE_HOOK_SECRET: TEST_SECRET,
			CHAT_WEBHOOK_URL: `http://127.0.0.1:${chat.port}/chat`,
			PORT: String(port),
		},
		stdout: "ignore",
		stderr: "ignore",
	});
	await until(
		async () =>
			(await fetch(botUrl, { method: "POST", body: "{}" }).catch(
				() => null,
			)) !== null,
		10_000,
		"the example bot to listen",
	);
});

afterAll(async () => {
	bot?.kill();
	await bot?.exited;
	chat?.stop(true);
	if (dir) rmSync(dir, { recursive: true, force: true });
});

/** POSTs `body` signed as the connector signs it. */
function send(body: Record<string, unknown>, signed = true) {
	const raw = JSON.stringify(body);
	const id = String(body.id);
	const at = new Date();
	const headers: Record<string, string> = {
		"content-type": "application/json",
		"webhook-id": id,
		"webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
		"webhook-signature": signed
			? new Webhook(TEST_SECRET).sign(id, at, raw)
			: "v1,bm90IGEgc2lnbmF0dXJl",
	};
	return fetch(botUrl, { method: "POST", headers, body: raw });
}

describe("docs/people.md's chat bot", () => {
	test("posts the link of a signed approval.requested, the agent's text made plain", async () => {
		const before = posted.length;
		const res = await send({
			id: "evt_1",
			type: "approval.requested",
			machine: "mac",
			thread_id: "t1",
			project: { id: "p", title: "web", path: "/srv/web" },
			title: "<!channel> deploy",
			question: { request_id: "r1", prompt: "run ls", decisions: [] },
			approval_url: "https://t3mcp.example.ts.net/a/tok",
		});
		expect(res.status).toBe(204);
		expect(posted.length).toBe(before + 1);
		const text = JSON.parse(posted.at(-1) ?? "{}").text as string;
		expect(text).toContain("Decide: https://t3mcp.example.ts.net/a/tok");
		expect(text).toContain("&#60;!channel&#62; deploy");
		expect(text).not.toContain("<!channel>");
	});

	test("reports approval.settled", async () => {
		const res = await send({
			id: "evt_2",
			type: "approval.settled",
			thread_id: "t1",
			request_id: "r1",
			decision: "accept",
			client: "boss",
			via: "link",
		});
		expect(res.status).toBe(204);
		expect(JSON.parse(posted.at(-1) ?? "{}").text).toBe(
			"Settled: accept by boss (link)",
		);
	});

	test("refuses a body without a valid signature, posting nothing", async () => {
		const before = posted.length;
		const res = await send({ id: "evt_3", type: "approval.requested" }, false);
		expect(res.status).toBe(401);
		expect(posted.length).toBe(before);
	});
});
