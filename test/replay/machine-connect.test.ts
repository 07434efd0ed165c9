/**
 * createMachine's connect sequence and failure handling against the replay server:
 * version gate, token and scope checks, unreachable servers, a stalled socket caught by the
 * heartbeat, and commands re-sent with the same commandId after a lost reply.
 */
import { describe, expect, it } from "bun:test";
import type { MachineDeps } from "../../src/t3/connect/machine.ts";
import { T3Error } from "../../src/t3/machine-api.ts";
import {
	cleanupAfterEach,
	replayConfig,
	startReplayMachine,
	states,
	watchedMachine,
} from "./machine-harness.ts";
import {
	PROTOCOL2_DESCRIPTOR,
	REPLAY_TOKEN,
	type ReplayServerOptions,
} from "./replay-server.ts";
import { until } from "./until.ts";

const cleanups = cleanupAfterEach();

function setup(
	options: ReplayServerOptions,
	token: string | null = REPLAY_TOKEN,
	deps: Partial<MachineDeps> = {},
) {
	return startReplayMachine(
		cleanups,
		options,
		(url) => replayConfig("lab", url, token),
		deps,
	);
}

async function rejection(p: Promise<unknown>): Promise<T3Error> {
	try {
		await p;
	} catch (err) {
		expect(err).toBeInstanceOf(T3Error);
		return err as T3Error;
	}
	throw new Error("expected a rejection");
}

describe("machine connect sequence", () => {
	it("a protocol-1 descriptor (no orchestrationProtocolVersion) is incompatible, with the exact message", async () => {
		const { server, machine } = setup({
			descriptor: {
				environmentId: "x",
				label: "old",
				serverVersion: "0.0.28",
				capabilities: {},
			},
		});
		const err = await rejection(machine.ready(5_000));
		expect(err.code).toBe("INCOMPATIBLE");
		expect(machine.status().state).toBe("incompatible");
		expect(machine.status().reason).toBe(
			`T3 machine "lab" (${server.url}) runs T3 Code 0.0.28 with no orchestration protocol version (protocol 1); T3 Code 0.1.0 or later (orchestration protocol 2) is required`,
		);
		expect(machine.status().serverVersion).toBe("0.0.28");
		expect(server.received).toHaveLength(0);
	});

	it("a newer protocol version is incompatible: this connector is the one to update", async () => {
		const { machine } = setup({
			descriptor: {
				...PROTOCOL2_DESCRIPTOR,
				serverVersion: "0.3.0",
				orchestrationProtocolVersion: 3,
			},
		});
		await until(
			() => machine.status().state === "incompatible",
			5_000,
			"incompatible",
		);
		expect(machine.status().reason).toContain(
			"runs T3 Code 0.3.0 with orchestration protocol 3;",
		);
		expect(machine.status().reason).toContain(
			"this t3code-mcp is too old for orchestration protocol 3; update t3code-mcp",
		);
		expect(machine.status().reason).not.toContain("0.1.0 or later");
	});

	it("the pre-release server is accepted only with assumeProtocol2", async () => {
		const { machine } = setup(
			{
				capture: "ws-continuation.jsonl",
				descriptor: { serverVersion: "0.0.28" },
			},
			REPLAY_TOKEN,
			{ assumeProtocol2: true },
		);
		await machine.ready(5_000);
		expect(machine.status().state).toBe("online");
	});

	it("no token: unauthorized naming the environment variable", async () => {
		const { machine } = setup({}, null);
		const err = await rejection(machine.ready(5_000));
		expect(err.code).toBe("UNAUTHORIZED");
		expect(machine.status().reason).toBe(
			'T3 machine "lab" (' +
				machine.url +
				"): no token: environment variable T3_LAB_TOKEN is not set",
		);
	});

	it("a rejected token: unauthorized naming the URL, never the token", async () => {
		const { machine } = setup({}, "wrong-secret-token");
		await until(
			() => machine.status().state === "unauthorized",
			5_000,
			"unauthorized",
		);
		expect(machine.status().reason).toContain(
			`token rejected by ${machine.url}`,
		);
		expect(machine.status().reason).not.toContain("wrong-secret-token");
	});

	it("a missing scope: unauthorized naming it", async () => {
		const { machine } = setup({
			scopes: ["orchestration:read", "terminal:operate"],
		});
		await until(
			() => machine.status().state === "unauthorized",
			5_000,
			"unauthorized",
		);
		expect(machine.status().reason).toContain(
			"token lacks scope orchestration:operate",
		);
	});

	it("an unreachable server: offline with the cause, retried", async () => {
		const probe = Bun.serve({ port: 0, fetch: () => new Response("") });
		const url = `http://127.0.0.1:${probe.port}`;
		await probe.stop(true);
		let attempts = 0;
		const { machine, changes } = watchedMachine(
			cleanups,
			replayConfig("lab", url),
			{
				fetch: (input, init) => {
					attempts += 1;
					return fetch(input, init);
				},
			},
		);
		expect(machine.status().state).toBe("connecting");
		machine.start();
		await until(() => attempts >= 3, 5_000, "three connection attempts");
		// Retries do not flap the state: from connecting to offline once.
		expect(states(changes)).toEqual(["offline"]);
		expect(machine.status().reason).toContain(
			`cannot reach ${url}/.well-known/t3/environment`,
		);
		const err = await rejection(machine.ready(50));
		expect(err.code).toBe("TIMEOUT");
	});
});

describe("machine liveness and commands", () => {
	it("a stalled socket is caught by the heartbeat, then the machine reconnects", async () => {
		const { server, machine, changes } = setup(
			{ capture: "ws-continuation.jsonl" },
			REPLAY_TOKEN,
			{
				pingIntervalMs: 50,
				pongTimeoutMs: 200,
			},
		);
		await machine.ready(5_000);
		await until(
			() => server.received.some((r) => r.frame._tag === "Ping"),
			2_000,
			"a ping",
		);
		await until(
			() => server.pendingShellChunks() === 0,
			2_000,
			"the recorded shell stream",
		);
		await until(
			() => server.acksReceived === server.chunksSent,
			2_000,
			"every chunk acked",
		);
		const seqBeforeStall = machine.sequence();
		expect(seqBeforeStall).toBe(60);
		server.stall();
		await until(
			() => machine.status().state !== "online",
			3_000,
			"the stall to be noticed",
		);
		const offline = changes.find(
			(c) => c.kind === "state" && c.status.state === "offline",
		);
		expect(offline?.kind === "state" && offline.status.reason).toContain(
			"no answer to ping for 200 ms",
		);
		await until(
			() => states(changes).filter((s) => s === "online").length === 2,
			5_000,
			"online again",
		);
		expect(server.shellRequests().at(-1)).toEqual({
			requestCompletionMarker: true,
			afterSequence: seqBeforeStall,
		});
	});

	it("dispatch re-sends the same command after the socket drops on it", async () => {
		const { server, machine, changes } = setup({
			capture: "ws-question.jsonl",
			dropOnFirst: "orchestration.dispatchCommand",
		});
		await machine.ready(5_000);
		const command = {
			type: "message.dispatch",
			commandId: "cmd-1",
			threadId: server.threadId as string,
			messageId: "msg-1",
			text: "please ask me a question",
			attachments: [],
			createdBy: "user",
			creationSource: "mcp",
			dispatchMode: { type: "start_immediately" },
		};
		const result = await machine.dispatch(command);
		expect(result).toEqual({ sequence: 67 });
		const sent = server.requests("orchestration.dispatchCommand");
		expect(sent).toHaveLength(2);
		expect(sent[0]).toEqual(command);
		expect(sent[1]).toEqual(command);
		expect(states(changes)).toContain("offline");
	});

	it("a typed failure is returned at once as REJECTED with the error tag", async () => {
		const { server, machine } = setup({ capture: "ws-question.jsonl" });
		await machine.ready(5_000);
		const err = await rejection(
			machine.dispatch({
				type: "thread.archive",
				commandId: "cmd-2",
				threadId: server.threadId as string,
			}),
		);
		expect(err.code).toBe("REJECTED");
		expect(err.detail?.tag).toBe("OrchestrationV2DispatchCommandError");
		expect(server.requests("orchestration.dispatchCommand")).toHaveLength(1);
	});

	it("serverConfig answers over the socket; getThread of an unknown thread is NOT_FOUND", async () => {
		const { machine } = setup({ capture: "ws-question.jsonl" });
		await machine.ready(5_000);
		const cfg = await machine.serverConfig();
		expect(Array.isArray(cfg.providers)).toBe(true);
		const err = await rejection(machine.getThread("thread-does-not-exist"));
		expect(err.code).toBe("NOT_FOUND");
	});

	it("commands wait for the machine and give up with its reason when it never comes online", async () => {
		const { machine } = setup({ descriptor: { serverVersion: "0.0.1" } });
		const err = await rejection(
			machine.dispatch({ type: "thread.archive", commandId: "c" }),
		);
		expect(err.code).toBe("INCOMPATIBLE");
	});
});
