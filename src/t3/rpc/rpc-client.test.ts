import { afterEach, describe, expect, it } from "bun:test";
import { until } from "../../../test/replay/until.ts";
import { silentLogger } from "../../util/log.ts";
import { T3Error } from "../machine-api.ts";
import { connectRpc, type RpcClient, type StreamEnd } from "./rpc-client.ts";

type Frame = Record<string, unknown>;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

/** A scripted socket peer: `answer` decides what to send back for each client frame. */
function peer(answer: (frame: Frame, send: (f: unknown) => void) => void) {
	const received: Frame[] = [];
	const server = Bun.serve({
		port: 0,
		hostname: "127.0.0.1",
		fetch: (req, srv) =>
			srv.upgrade(req) ? undefined : new Response("no", { status: 401 }),
		websocket: {
			message(ws, msg) {
				const frame = JSON.parse(String(msg)) as Frame;
				received.push(frame);
				answer(frame, (f) => ws.send(JSON.stringify(f)));
			},
		},
	});
	cleanups.push(() => server.stop(true));
	return { url: `ws://127.0.0.1:${server.port}/ws`, received };
}

async function client(
	url: string,
	extra: Partial<Parameters<typeof connectRpc>[0]> = {},
): Promise<RpcClient> {
	const c = await connectRpc({ url, log: silentLogger, ...extra });
	cleanups.push(() => c.close());
	return c;
}

describe("rpc-client", () => {
	it("acks every chunk once after handing over all its values; cancel sends Interrupt", async () => {
		const p = peer((f, send) => {
			if (f._tag === "Request") {
				send([
					{ _tag: "Chunk", requestId: f.id, values: [1, 2, 3] },
					{ _tag: "Chunk", requestId: f.id, values: [4] },
				]);
			}
			if (f._tag === "Interrupt") {
				send({
					_tag: "Exit",
					requestId: f.requestId,
					exit: { _tag: "Failure", cause: [{ _tag: "Interrupt" }] },
				});
			}
		});
		const c = await client(p.url);
		const items: unknown[] = [];
		const ends: StreamEnd[] = [];
		const s = c.stream(
			"orchestration.subscribeShell",
			{ requestCompletionMarker: true },
			(v) => items.push(v),
			(e) => ends.push(e),
		);
		await until(
			() => p.received.filter((f) => f._tag === "Ack").length === 2,
			2_000,
			"two acks",
		);
		expect(items).toEqual([1, 2, 3, 4]);
		expect(p.received[0]).toEqual({
			_tag: "Request",
			id: "1",
			tag: "orchestration.subscribeShell",
			payload: { requestCompletionMarker: true },
			headers: [],
		});
		s.cancel();
		await until(
			() => p.received.some((f) => f._tag === "Interrupt"),
			2_000,
			"interrupt",
		);
		expect(p.received.find((f) => f._tag === "Interrupt")).toEqual({
			_tag: "Interrupt",
			requestId: "1",
			interruptors: [],
		});
	});

	it("maps exits to values and T3Errors", async () => {
		const p = peer((f, send) => {
			if (f._tag !== "Request") return;
			const tag = f.tag as string;
			if (tag === "ok")
				send({
					_tag: "Exit",
					requestId: f.id,
					exit: { _tag: "Success", value: { sequence: 7 } },
				});
			if (tag === "fail") {
				send({
					_tag: "Exit",
					requestId: f.id,
					exit: {
						_tag: "Failure",
						cause: [
							{ _tag: "Fail", error: { _tag: "SomeError", message: "nope" } },
						],
					},
				});
			}
			if (tag === "die")
				send({
					_tag: "Exit",
					requestId: f.id,
					exit: {
						_tag: "Failure",
						cause: [{ _tag: "Die", defect: "Missing key" }],
					},
				});
			// "slow": never answered
		});
		const c = await client(p.url);
		expect(await c.request("ok", {})).toEqual({ sequence: 7 });
		const fail = (await c.request("fail", {}).catch((e) => e)) as T3Error;
		expect(fail).toBeInstanceOf(T3Error);
		expect([fail.code, fail.detail?.tag, fail.message]).toEqual([
			"REJECTED",
			"SomeError",
			"nope",
		]);
		expect(((await c.request("die", {}).catch((e) => e)) as T3Error).code).toBe(
			"DEFECT",
		);
		expect(
			(
				(await c
					.request("slow", {}, { timeoutMs: 30 })
					.catch((e) => e)) as T3Error
			).code,
		).toBe("TIMEOUT");
		const pending = c.request("slow", {});
		c.close();
		expect(((await pending.catch((e) => e)) as T3Error).code).toBe(
			"DISCONNECTED",
		);
		expect(((await c.request("ok", {}).catch((e) => e)) as T3Error).code).toBe(
			"DISCONNECTED",
		);
	});

	it("pings, and declares a silent peer dead", async () => {
		let answerPings = true;
		const p = peer((f, send) => {
			if (f._tag === "Ping" && answerPings) send({ _tag: "Pong" });
		});
		const c = await client(p.url, { pingIntervalMs: 20, pongTimeoutMs: 100 });
		const reasons: string[] = [];
		const silent: boolean[] = [];
		c.onClose((r, s) => {
			reasons.push(r);
			silent.push(s);
		});
		await until(
			() => p.received.filter((f) => f._tag === "Ping").length >= 3,
			2_000,
			"pings",
		);
		expect(c.isOpen()).toBe(true);
		answerPings = false;
		await until(() => reasons.length === 1, 2_000, "dead socket");
		expect(reasons[0]).toContain("no answer to ping for 100 ms");
		expect(silent).toEqual([true]);
		expect(c.isOpen()).toBe(false);
	});

	it("a refused upgrade rejects with a typed error that hides the ticket", async () => {
		const server = Bun.serve({
			port: 0,
			hostname: "127.0.0.1",
			fetch: () => new Response("no", { status: 401 }),
		});
		cleanups.push(() => server.stop(true));
		const err = (await connectRpc({
			url: `ws://127.0.0.1:${server.port}/ws?wsTicket=SECRET`,
			log: silentLogger,
		}).catch((e) => e)) as T3Error;
		expect(err).toBeInstanceOf(T3Error);
		expect(err.code).toBe("UNAUTHORIZED");
		expect(err.message).not.toContain("SECRET");
	});
});
