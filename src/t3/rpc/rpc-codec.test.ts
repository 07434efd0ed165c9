import { describe, expect, it } from "bun:test";
import {
	captureNames,
	loadCapture,
	recordedCalls,
} from "../../../test/replay/captures.ts";
import {
	decodeExit,
	decodeFrame,
	encodeAck,
	encodeInterrupt,
	encodePing,
	encodeRequest,
	type ServerMessage,
} from "./rpc-codec.ts";

describe("rpc-codec: replay of every captured frame", () => {
	for (const name of captureNames()) {
		it(`${name}: every server frame decodes, every client frame re-encodes identically`, () => {
			const lines = loadCapture(name);
			const counts: Record<string, number> = {};
			const expected: Record<string, number> = {};
			for (const line of lines) {
				if (line.dir === "recv") {
					const raw = line.frame as { _tag?: string };
					expected[raw._tag ?? "?"] = (expected[raw._tag ?? "?"] ?? 0) + 1;
					const decoded: ServerMessage[] = decodeFrame(
						JSON.stringify(line.frame),
					);
					expect(decoded).toHaveLength(1);
					const msg = decoded[0] as ServerMessage;
					counts[msg._tag] = (counts[msg._tag] ?? 0) + 1;
					if (msg._tag === "Exit")
						expect(() => decodeExit(msg.exit)).not.toThrow();
					if (msg._tag === "Chunk")
						expect(msg.values.length).toBeGreaterThan(0);
				}
				if (line.dir === "send") {
					const f = line.frame as Record<string, unknown>;
					if (typeof f !== "object" || f === null) continue;
					const text = JSON.stringify(f);
					if (f._tag === "Request")
						expect(encodeRequest(String(f.id), String(f.tag), f.payload)).toBe(
							text,
						);
					if (f._tag === "Ack")
						expect(encodeAck(String(f.requestId))).toBe(text);
					if (f._tag === "Interrupt")
						expect(encodeInterrupt(String(f.requestId))).toBe(text);
					if (f._tag === "Ping") expect(encodePing()).toBe(text);
				}
			}
			// Nothing a real server sent is reported as unknown.
			expect(counts).toEqual(expected);
			expect(counts.unknown).toBeUndefined();
		});
	}

	it("ws-transport.jsonl: Pong, a Defect for the garbage frame, and a Success exit", () => {
		const lines = loadCapture("ws-transport.jsonl");
		const msgs = lines
			.filter((l) => l.dir === "recv")
			.flatMap((l) => decodeFrame(JSON.stringify(l.frame)));
		expect(msgs.filter((m) => m._tag === "Pong").length).toBeGreaterThanOrEqual(
			1,
		);
		const defect = msgs.find((m) => m._tag === "Defect");
		expect(defect).toBeDefined();
		const exits = msgs
			.filter((m) => m._tag === "Exit")
			.map((m) => (m._tag === "Exit" ? decodeExit(m.exit) : null));
		expect(exits.some((e) => e?.ok === true)).toBe(true);
		expect(exits.some((e) => e?.ok === false && e.kind === "interrupt")).toBe(
			true,
		);
	});

	it("ws-replay-errors.jsonl: typed Fail, Die defects and successes decode to the right kinds", () => {
		const calls = recordedCalls(loadCapture("ws-replay-errors.jsonl"));
		const results = calls.map((c) => {
			const exit = c.frames.find((f) => f.frame._tag === "Exit");
			return exit ? decodeExit(exit.frame.exit) : null;
		});
		const fails = results.filter((r) => r && !r.ok && r.kind === "fail");
		const dies = results.filter((r) => r && !r.ok && r.kind === "die");
		expect(fails.length).toBeGreaterThanOrEqual(6);
		expect(dies.length).toBeGreaterThanOrEqual(4);
		const tags = new Set(
			fails.map((f) => (f && !f.ok && f.kind === "fail" ? f.tag : "")),
		);
		expect(tags.has("OrchestrationV2DispatchCommandError")).toBe(true);
		expect(tags.has("OrchestrationV2ThreadLaunchError")).toBe(true);
		const dispatchFail = fails.find(
			(f) =>
				f &&
				!f.ok &&
				f.kind === "fail" &&
				f.message.includes("not interruptible"),
		);
		expect(dispatchFail).toBeDefined();
		const unknownTag = dies.find(
			(d) =>
				d &&
				!d.ok &&
				d.kind === "die" &&
				d.defect.includes("Unknown request tag"),
		);
		expect(unknownTag).toBeDefined();
		expect(results.filter((r) => r?.ok).length).toBeGreaterThanOrEqual(5);
	});

	it("counts chunks and exits of the question capture's shell stream", () => {
		const calls = recordedCalls(loadCapture("ws-question.jsonl"));
		const shell = calls.find((c) => c.tag === "orchestration.subscribeShell");
		expect(shell).toBeDefined();
		const chunks = shell?.frames.filter((f) => f.frame._tag === "Chunk") ?? [];
		const exits = shell?.frames.filter((f) => f.frame._tag === "Exit") ?? [];
		expect(chunks.length).toBe(10);
		expect(exits.length).toBe(1);
		const exit = decodeExit(exits[0]?.frame.exit);
		expect(exit).toEqual({ ok: false, kind: "interrupt" });
	});
});

describe("rpc-codec: leniency", () => {
	it("accepts an array of messages in one frame", () => {
		const frame = JSON.stringify([
			{ _tag: "Pong" },
			{ _tag: "Chunk", requestId: 7, values: [1] },
		]);
		expect(decodeFrame(frame)).toEqual([
			{ _tag: "Pong" },
			{ _tag: "Chunk", requestId: "7", values: [1] },
		]);
	});

	it("reports unparsable text and unknown tags instead of throwing", () => {
		expect(decodeFrame("this is not json")).toEqual([
			{ _tag: "unknown", raw: "this is not json" },
		]);
		expect(decodeFrame('{"_tag":"ClientProtocolError"}')[0]?._tag).toBe(
			"unknown",
		);
		expect(decodeFrame("42")[0]?._tag).toBe("unknown");
		expect(decodeFrame('{"_tag":"Chunk"}')[0]?._tag).toBe("unknown");
	});

	it("decodes every exit shape", () => {
		expect(decodeExit({ _tag: "Success", value: { sequence: 4 } })).toEqual({
			ok: true,
			value: { sequence: 4 },
		});
		expect(decodeExit({ _tag: "Success" })).toEqual({ ok: true, value: null });
		expect(
			decodeExit({
				_tag: "Failure",
				cause: [
					{ _tag: "Interrupt", fiberId: 1 },
					{
						_tag: "Fail",
						error: {
							_tag: "EnvironmentAuthorizationError",
							message: "missing scope",
						},
					},
				],
			}),
		).toMatchObject({
			ok: false,
			kind: "fail",
			tag: "EnvironmentAuthorizationError",
			message: "missing scope",
		});
		expect(
			decodeExit({
				_tag: "Failure",
				cause: [{ _tag: "Die", defect: { name: "Error", message: "boom" } }],
			}),
		).toEqual({
			ok: false,
			kind: "die",
			defect: "Error: boom",
		});
		expect(
			decodeExit({ _tag: "Failure", cause: [{ _tag: "Interrupt" }] }),
		).toEqual({ ok: false, kind: "interrupt" });
		expect(decodeExit(null)).toMatchObject({ ok: false, kind: "die" });
		expect(decodeExit({ _tag: "Weird" })).toMatchObject({
			ok: false,
			kind: "die",
		});
	});
});
