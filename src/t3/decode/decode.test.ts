import { heapStats } from "bun:jsc";
import { describe, expect, it } from "bun:test";
import {
	captureNames,
	loadCapture,
	readCaptureJson,
	readCaptureNames,
	recordedCalls,
} from "../../../test/replay/captures.ts";
import { createLogger } from "../../util/log.ts";
import { T3Error } from "../machine-api.ts";
import type { ShellStreamItem, ThreadShell } from "../model.ts";
import { decodeExit } from "../rpc/rpc-codec.ts";
import {
	decodeAuthSession,
	decodeDescriptor,
	decodeTicket,
} from "./connect.ts";
import { createUnknownKindReporter } from "./kinded.ts";
import { decodeModelSelection } from "./model-selection.ts";
import {
	decodeLaunchResult,
	decodeThreadDetail,
	decodeThreadProjection,
} from "./projection.ts";
import {
	decodeMessage,
	decodeRun,
	decodeRuntimeRequest,
	decodeTurnItem,
} from "./rows.ts";
import {
	compactThreadShell,
	decodeHeldThreadShell,
	decodeShellSnapshot,
	decodeThreadShell,
} from "./shell.ts";
import { decodeShellStreamItem } from "./shell-stream.ts";
import { decodeThreadStreamItem } from "./thread-stream.ts";

function chunkValues(call: {
	frames: { frame: Record<string, unknown> }[];
}): unknown[] {
	return call.frames
		.filter((f) => f.frame._tag === "Chunk")
		.flatMap((f) => f.frame.values as unknown[]);
}

const FINAL_SHELL_STATUS: Record<string, string> = {
	"ws-approval.jsonl": "completed",
	"ws-busy.jsonl": "completed",
	"ws-continuation.jsonl": "completed",
	"ws-fail.jsonl": "failed",
	"ws-interrupt.jsonl": "interrupted",
	"ws-launch.jsonl": "completed",
	"ws-question.jsonl": "completed",
	"ws-question-interrupt.jsonl": "running",
	"ws-stream.jsonl": "completed",
};

describe("decode: every captured shell stream item", () => {
	for (const name of captureNames()) {
		it(`${name}: shell items decode to known kinds with the recorded fields`, () => {
			const unknownKinds: string[] = [];
			const calls = recordedCalls(loadCapture(name)).filter(
				(c) => c.tag === "orchestration.subscribeShell",
			);
			let lastThreadStatus: string | undefined;
			for (const call of calls) {
				for (const raw of chunkValues(call)) {
					const item: ShellStreamItem = decodeShellStreamItem(raw, (k) =>
						unknownKinds.push(k),
					);
					const r = raw as Record<string, unknown>;
					expect(item.kind).toBe(r.kind as ShellStreamItem["kind"]);
					if (item.kind === "snapshot") {
						const snap = r.snapshot as Record<string, unknown[]>;
						expect(item.snapshot.threads).toHaveLength(
							snap.threads?.length ?? 0,
						);
						expect(item.snapshot.projects).toHaveLength(
							snap.projects?.length ?? 0,
						);
						expect(item.resolvedRepositoryIdentityRoots !== undefined).toBe(
							r.resolvedRepositoryIdentityRoots !== undefined,
						);
					}
					if (item.kind === "thread.updated") {
						const t = r.thread as Record<string, unknown>;
						expect(item.sequence).toBe(r.sequence as number);
						expect(item.thread.id).toBe(t.id as string);
						expect(item.thread.status).toBe(t.status as string);
						expect(item.thread.activeRunId).toBe(
							(t.activeRunId as string | null) ?? null,
						);
						expect(item.thread.pendingRuntimeRequest?.id ?? null).toBe(
							(t.pendingRuntimeRequest as { id?: string } | null)?.id ?? null,
						);
						// Unknown keys survive decoding.
						expect(item.thread.lineage).toEqual(t.lineage);
						if (item.location === "active")
							lastThreadStatus = item.thread.status;
					}
					if (item.kind === "thread.removed")
						expect(item.threadId).toBe(r.threadId as string);
				}
			}
			expect(unknownKinds).toEqual([]);
			const expected = FINAL_SHELL_STATUS[name];
			if (expected) expect(lastThreadStatus).toBe(expected);
		});
	}

	it("ws-extras.jsonl: archive shows as thread.updated in the archive, delete as thread.removed", () => {
		const calls = recordedCalls(loadCapture("ws-extras.jsonl")).filter(
			(c) => c.tag === "orchestration.subscribeShell",
		);
		const items = calls
			.flatMap(chunkValues)
			.map((v) => decodeShellStreamItem(v));
		const updated = items.find((i) => i.kind === "thread.updated");
		expect(updated?.kind === "thread.updated" && updated.location).toBe(
			"archive",
		);
		const removed = items.find((i) => i.kind === "thread.removed");
		expect(removed?.kind === "thread.removed" && removed.location).toBe(
			"archive",
		);
	});
});

describe("decode: every captured thread stream item and RPC result", () => {
	for (const name of captureNames()) {
		it(`${name}: thread items, event payloads and exits decode`, () => {
			const unknownKinds: string[] = [];
			for (const call of recordedCalls(loadCapture(name))) {
				if (call.tag === "orchestration.subscribeThread") {
					for (const raw of chunkValues(call)) {
						const item = decodeThreadStreamItem(raw, (k) =>
							unknownKinds.push(k),
						);
						expect(item.kind).not.toBe("unknown");
						if (item.kind === "snapshot") {
							const p = (
								raw as { projection: { runs: unknown[]; turnItems: unknown[] } }
							).projection;
							expect(item.projection.runs).toHaveLength(p.runs.length);
							expect(item.projection.turnItems).toHaveLength(
								p.turnItems.length,
							);
						}
						if (item.kind === "event") {
							const { type, payload } = item.event;
							if (type === "run.created" || type === "run.updated") {
								expect(decodeRun(payload).status).toBe(
									(payload as { status: string }).status,
								);
							}
							if (type === "turn-item.updated")
								expect(decodeTurnItem(payload).type).toBeTruthy();
							if (type === "runtime-request.updated")
								expect(decodeRuntimeRequest(payload).kind).toBeTruthy();
							if (type === "message.updated")
								expect(typeof decodeMessage(payload).text).toBe("string");
						}
					}
				}
				const exit = call.frames.find((f) => f.frame._tag === "Exit");
				if (!exit) continue;
				const result = decodeExit(exit.frame.exit);
				if (!result.ok) continue;
				if (call.tag === "orchestration.launchThread") {
					const launch = decodeLaunchResult(result.value);
					expect(launch.threadId).toBe(launch.projection.thread.id);
				}
				if (call.tag === "orchestration.getThreadProjection") {
					expect(
						decodeThreadProjection(result.value).runs.length,
					).toBeGreaterThan(0);
				}
				if (call.tag === "orchestration.getArchivedShellSnapshot") {
					expect(
						decodeShellSnapshot(result.value).snapshotSequence,
					).toBeGreaterThan(0);
				}
			}
			expect(unknownKinds).toEqual([]);
		});
	}

	it("ws-launchThread.result.json and ws-getThreadProjection.result.json", () => {
		const launch = decodeLaunchResult(
			(readCaptureJson("ws-launchThread.result.json") as { value: unknown })
				.value,
		);
		expect(launch.resumed).toBe(false);
		const run = launch.projection.runs[0];
		expect(run?.status).toBe("preparing");
		// The projection's thread has no activity summary on the wire: it is derived from the
		// rows as T3 derives the shell's, never "idle" beside a run.
		expect(launch.projection.thread).toMatchObject({
			status: "preparing",
			latestRunId: run?.id,
			activeRunId: run?.id,
			pendingRuntimeRequest: null,
		});
		const projection = decodeThreadProjection(
			(
				readCaptureJson("ws-getThreadProjection.result.json") as {
					value: unknown;
				}
			).value,
		);
		expect(projection.runs.length).toBeGreaterThan(0);
		expect(projection.messages.some((m) => m.role === "assistant")).toBe(true);
		expect(projection.thread).toMatchObject({
			status: "completed",
			latestRunId: projection.runs.at(-1)?.id,
			activeRunId: null,
		});
	});

	it("a projection thread that carries its own status keeps it", () => {
		const raw = (
			readCaptureJson("ws-getThreadProjection.result.json") as {
				value: { thread: Record<string, unknown> };
			}
		).value;
		const projection = decodeThreadProjection({
			...raw,
			thread: { ...raw.thread, status: "interrupted", latestRunId: "r-x" },
		});
		expect(projection.thread.status).toBe("interrupted");
		expect(projection.thread.latestRunId).toBe("r-x");
	});
});

describe("decode: captured HTTP bodies", () => {
	const body = (name: string) =>
		(readCaptureJson(name) as { body: unknown }).body;

	it("descriptor of the pre-release server has no protocol version (protocol 1 by the rule)", () => {
		const d = decodeDescriptor(body("http-pre-descriptor.json"));
		expect(d.serverVersion).toBe("0.0.28");
		expect(d.orchestrationProtocolVersion).toBeUndefined();
		expect(d.capabilities).toBeDefined();
	});

	it("auth sessions: paired, admin, anonymous, bad token", () => {
		expect(
			decodeAuthSession(body("http-pre-auth-session-paired.json")).scopes,
		).toEqual(["orchestration:read", "orchestration:operate"]);
		expect(
			decodeAuthSession(body("http-pre-auth-session-admin.json")).authenticated,
		).toBe(true);
		expect(
			decodeAuthSession(body("http-pre-auth-session-anon.json")).authenticated,
		).toBe(false);
		const bad = decodeAuthSession(body("http-pre-auth-session-badtoken.json"));
		expect(bad.authenticated).toBe(false);
		expect(bad.scopes).toBeUndefined();
	});

	it("ticket, shells and thread details", () => {
		expect(decodeTicket(body("http-pre-ws-ticket.json")).ticket).toBe(
			"<redacted>",
		);
		for (const name of readCaptureNames("http-", "shell.json").concat(
			readCaptureNames("http-", "shell-with-protocol-header.json"),
		)) {
			const raw = readCaptureJson(name) as {
				status: number;
				body: { snapshotSequence: number; threads: unknown[] };
			};
			if (raw.status !== 200) continue;
			const shell = decodeShellSnapshot(raw.body);
			expect(shell.snapshotSequence).toBe(raw.body.snapshotSequence);
			expect(shell.threads).toHaveLength(raw.body.threads.length);
		}
		const shell = decodeShellSnapshot(body("http-post-shell.json"));
		expect(shell.threads[0]?.status).toBe("completed");
		expect(shell.projects[0]?.id).toBe("project-ws-1");
		for (const name of [
			"http-post-thread.json",
			"http-post-thread-with-protocol-header.json",
		]) {
			const detail = decodeThreadDetail(body(name));
			expect(detail.snapshotSequence).toBe(211);
			expect(detail.projection.runs.map((r) => r.status)).toEqual([
				"completed",
				"completed",
				"completed",
				"interrupted",
				"failed",
				"interrupted",
				"completed",
				"completed",
			]);
		}
		const recovered = decodeThreadDetail(
			readCaptureJson("http-after-recovery-thread.json"),
		);
		expect(recovered.projection.runs.at(-1)?.status).toBe("cancelled");
	});
});

/** A released 0.1.x shell after a usage limit (idx 70102248590 `OrchestrationV2ThreadShell`). */
const RELEASED_SHELL = {
	id: "released",
	status: "failed",
	latestRunId: "run-1",
	lastErrorClass: "usage_limit",
	usageLimitResetAt: "2026-12-01T14:00:00.000Z",
	limitRecovery: {
		runId: "run-1",
		resetAt: "2026-12-01T14:00:00.000Z",
		autoResume: true,
		snooze: { until: "x" },
	},
	snoozedUntil: "2026-12-02T09:00:00.000Z",
	pendingBackgroundTasks: [
		{ taskId: "t1", kind: "command", description: "npm run watch" },
		{ taskId: "t2", kind: "monitor" },
	],
};

describe("decode: held thread shells", () => {
	const uuid = (i: number) =>
		`00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
	/** Heap bytes a held thread, 20 000 decoded from a fresh parse each (as snapshots are). */
	const heldBytes = (raw: (i: number) => unknown) => {
		Bun.gc(true);
		const before = heapStats().heapSize;
		const kept = new Map<string, ThreadShell>();
		for (let i = 0; i < 20_000; i += 1) {
			const thread = decodeHeldThreadShell(JSON.parse(JSON.stringify(raw(i))));
			kept.set(thread.id, thread);
		}
		Bun.gc(true);
		return (heapStats().heapSize - before) / kept.size;
	};
	it("keep the released failure, recovery, snooze and background-task count", () => {
		expect(decodeHeldThreadShell(RELEASED_SHELL)).toMatchObject({
			lastErrorClass: "usage_limit",
			usageLimitResetAt: "2026-12-01T14:00:00.000Z",
			limitRecovery: {
				runId: "run-1",
				resetAt: "2026-12-01T14:00:00.000Z",
				autoResume: true,
			},
			snoozedUntil: "2026-12-02T09:00:00.000Z",
			backgroundTaskCount: 2,
		});
		const held = decodeHeldThreadShell(RELEASED_SHELL);
		expect(held.limitRecovery).not.toHaveProperty("snooze");
		expect(held).not.toHaveProperty("pendingBackgroundTasks");
	});

	/** Every thread shell in the captures: HTTP shells, stream snapshots and updates. */
	function capturedThreads(): unknown[] {
		const threads: unknown[] = [];
		for (const name of readCaptureNames("http-", "shell.json").concat(
			readCaptureNames("http-", "shell-with-protocol-header.json"),
		)) {
			const raw = readCaptureJson(name) as { body?: { threads?: unknown[] } };
			threads.push(...(raw.body?.threads ?? []));
		}
		for (const name of captureNames())
			for (const call of recordedCalls(loadCapture(name)))
				if (call.tag === "orchestration.subscribeShell")
					for (const raw of chunkValues(call)) {
						const r = raw as {
							snapshot?: { threads?: unknown[] };
							thread?: unknown;
						};
						threads.push(...(r.snapshot?.threads ?? []));
						if (r.thread) threads.push(r.thread);
					}
		return threads;
	}

	it("equal the compacted full decode, for every captured thread and the edge cases", () => {
		const threads = capturedThreads();
		expect(threads.length).toBeGreaterThan(20);
		threads.push(
			{ id: "bare" },
			{
				id: "legacy",
				modelSelection: { provider: "codex", model: "m", options: { x: "y" } },
				latestVisibleMessage: { id: "m", text: "x".repeat(2_000), extra: 1 },
				pendingRuntimeRequest: { id: "r", extra: true },
				lineage: { rootThreadId: "legacy" },
				status: 7,
			},
			RELEASED_SHELL,
		);
		for (const raw of threads) {
			const held = decodeHeldThreadShell(raw);
			const full = compactThreadShell(decodeThreadShell(raw));
			expect(held).toEqual(full);
			// Same keys in the same order: a re-sent snapshot compares equal as JSON.
			expect(JSON.stringify(held)).toBe(JSON.stringify(full));
		}
		// Released 0.1.x lineage, pins and activity are kept (issue 26 item 8); other extras are not.
		const kept = decodeHeldThreadShell({
			id: "forked",
			lineage: { rootThreadId: "root" },
			forkedFrom: { threadId: "root", runId: "run-1" },
			pinnedAt: "2026-12-01T00:00:00.000Z",
			activityRunStatus: "running",
			latestUserAuthoredMessageAt: "2026-12-01T00:00:01.000Z",
			unknownExtra: { big: "x".repeat(100) },
		}) as Record<string, unknown>;
		expect(kept).toMatchObject({
			lineage: { rootThreadId: "root" },
			forkedFrom: { threadId: "root", runId: "run-1" },
			pinnedAt: "2026-12-01T00:00:00.000Z",
			activityRunStatus: "running",
			latestUserAuthoredMessageAt: "2026-12-01T00:00:01.000Z",
		});
		expect(kept.unknownExtra).toBeUndefined();
		// T3's lineage of a thread that is no fork names no parent: not held (an object per
		// thread of 100 000); one naming a parent is.
		const plain = decodeHeldThreadShell({
			id: "plain",
			lineage: {
				parentThreadId: null,
				relationshipToParent: null,
				rootThreadId: "plain",
			},
		}) as Record<string, unknown>;
		expect(plain.lineage).toBeUndefined();
		const fork = {
			parentThreadId: "src",
			relationshipToParent: "fork",
			rootThreadId: "src",
		};
		expect(
			(
				decodeHeldThreadShell({ id: "f", lineage: fork }) as Record<
					string,
					unknown
				>
			).lineage,
		).toEqual(fork);
		expect(() => decodeHeldThreadShell({ title: "x" })).toThrow(T3Error);
	});

	it("a long latest message is held as its cut only, not the whole reply", () => {
		// 2 000 threads whose latest message is a 20 KB reply: what stays live after a full
		// collection, with the decoded replies gone. Held as a slice of the reply, each cut
		// kept its reply alive (~40 MB); held as a copy of the cut, ~1 MB.
		Bun.gc(true);
		const before = heapStats().heapSize;
		const held: ThreadShell[] = [];
		for (let i = 0; i < 2_000; i += 1) {
			const reply = `reply ${i} ${"y".repeat(20_000)}`;
			const raw = JSON.parse(
				JSON.stringify({
					id: `t${i}`,
					latestVisibleMessage: { id: `m${i}`, role: "assistant", text: reply },
				}),
			);
			held.push(
				i % 2 === 0
					? decodeHeldThreadShell(raw)
					: compactThreadShell(decodeThreadShell(raw)),
			);
		}
		Bun.gc(true);
		const grown = heapStats().heapSize - before;
		expect(held[1]?.latestVisibleMessage?.text).toBe(
			`reply 1 ${"y".repeat(492)}`,
		);
		expect(held.every((t) => t.latestVisibleMessage?.text.length === 500)).toBe(
			true,
		);
		expect(grown).toBeLessThan(8 * 2 ** 20);
	});

	it("a field T3 sends as null is not held: every thread would keep a slot for it", () => {
		// What a released T3 sends for an idle thread that never ran: most fields null.
		const idle = (i: number) => ({
			id: uuid(i),
			projectId: "project-1",
			title: `thread ${i}`,
			providerInstanceId: "claudeAgent",
			modelSelection: { instanceId: "claudeAgent", model: "claude-opus-5" },
			runtimeMode: "full-access",
			interactionMode: "default",
			branch: null,
			worktreePath: null,
			lineage: {
				parentThreadId: null,
				relationshipToParent: null,
				rootThreadId: uuid(i),
			},
			forkedFrom: null,
			createdAt: "2026-12-04T18:05:37.376Z",
			updatedAt: "2026-12-04T18:05:37.376Z",
			archivedAt: null,
			snoozedUntil: null,
			deletedAt: null,
			latestRunId: null,
			activeRunId: null,
			activityRunStatus: null,
			status: "idle",
			lastError: null,
			lastErrorClass: null,
			usageLimitResetAt: null,
			pendingRuntimeRequest: null,
			latestVisibleMessage: null,
			latestUserMessageAt: null,
			pendingBackgroundTasks: [],
		});
		const held = decodeHeldThreadShell(idle(1)) as Record<string, unknown>;
		for (const key of ["branch", "worktreePath", "archivedAt", "lastError"])
			expect(held).not.toHaveProperty(key);
		expect(held).toMatchObject({ runtimeMode: "full-access", deletedAt: null });
		expect(decodeHeldThreadShell({ ...idle(2), branch: "t3/x" }).branch).toBe(
			"t3/x",
		);
		// A failed thread's error text is not held at all (its projection has it): only its class.
		const failed = decodeHeldThreadShell({
			...idle(3),
			status: "failed",
			lastError: `Error: provider crashed\n${"    at frame\n".repeat(2_000)}`,
			lastErrorClass: "provider_error",
		});
		expect(failed).not.toHaveProperty("lastError");
		expect(failed.lastErrorClass).toBe("provider_error");
		// ~527 bytes with the nulls held, ~402 without.
		expect(heldBytes(idle)).toBeLessThan(460);
	});

	it("a thread that ran holds no times or ids nothing reads", () => {
		// As a pre-release T3 sends a thread that ran: times of its own, its latest message.
		const ran = (i: number) => ({
			id: uuid(i),
			projectId: "project-1",
			title: `thread ${i}`,
			latestRunId: `run:thread:${uuid(i)}:ordinal:1`,
			activeRunId: null,
			status: "completed",
			pendingRuntimeRequest: null,
			latestVisibleMessage: {
				id: uuid(1_000_000 + i),
				role: "assistant",
				text: `done with ${i}`,
				updatedAt: `2026-12-04T18:${String(i % 60).padStart(2, "0")}:01.${String(i % 1000).padStart(3, "0")}Z`,
			},
			latestUserMessageAt: `2026-12-04T17:${String(i % 60).padStart(2, "0")}:02.${String(i % 1000).padStart(3, "0")}Z`,
			createdAt: `2026-12-04T16:${String(i % 60).padStart(2, "0")}:03.${String(i % 1000).padStart(3, "0")}Z`,
			updatedAt: `2026-12-04T18:${String(i % 60).padStart(2, "0")}:04.${String(i % 1000).padStart(3, "0")}Z`,
		});
		const held = decodeHeldThreadShell(ran(1)) as Record<string, unknown>;
		expect(held).not.toHaveProperty("createdAt");
		expect(held).not.toHaveProperty("latestUserMessageAt");
		expect(held.latestVisibleMessage).toEqual({
			role: "assistant",
			text: "done with 1",
		});
		expect(held.updatedAt).toBe(ran(1).updatedAt);
		// ~767 bytes with them held, ~545 without.
		expect(heldBytes(ran)).toBeLessThan(620);
	});

	it("shell snapshots hold their threads that way", () => {
		const raw = readCaptureJson("http-post-shell.json") as {
			body: { threads: unknown[] };
		};
		expect(decodeShellSnapshot(raw.body).threads).toEqual(
			raw.body.threads.map(decodeHeldThreadShell),
		);
	});
});

describe("decode: leniency and errors", () => {
	it("a missing id is a BAD_RESPONSE T3Error", () => {
		expect(() => decodeThreadShell({ title: "x" })).toThrow(T3Error);
		try {
			decodeRun({ status: "running" });
		} catch (err) {
			expect((err as T3Error).code).toBe("BAD_RESPONSE");
		}
		expect(() =>
			decodeThreadDetail({ snapshotSequence: 1, projection: { thread: {} } }),
		).toThrow(T3Error);
	});

	it("malformed list members are skipped, not fatal", () => {
		const p = decodeThreadProjection({
			thread: { id: "t1" },
			runs: [{ id: "r1", status: "running" }, { nope: 1 }],
		});
		expect(p.runs.map((r) => r.id)).toEqual(["r1"]);
		expect(p.turnItems).toEqual([]);
	});

	it("unknown stream kinds become {kind:'unknown'} and are logged once per kind", () => {
		const lines: string[] = [];
		const report = createUnknownKindReporter(
			createLogger("debug", (l) => lines.push(l)),
			"shell stream item",
		);
		expect(decodeShellStreamItem({ kind: "shell.future" }, report)).toEqual({
			kind: "unknown",
			raw: { kind: "shell.future" },
		});
		decodeShellStreamItem({ kind: "shell.future" }, report);
		decodeShellStreamItem({ kind: "other.future" }, report);
		expect(lines).toHaveLength(2);
		expect(
			decodeShellStreamItem({ kind: "thread.updated", sequence: 3 }, report)
				.kind,
		).toBe("unknown");
		expect(decodeThreadStreamItem({ kind: "unknown-event" }).kind).toBe(
			"unknown",
		);
	});

	it("released shapes: metadata snapshot, removals, question flags, option values, new enum members", () => {
		const meta = decodeShellStreamItem({
			kind: "snapshot",
			snapshot: {
				schemaVersion: 3,
				snapshotSequence: 9,
				projects: [],
				threads: [],
				archivedThreads: [],
			},
			resolvedRepositoryIdentityRoots: ["/srv"],
		});
		expect(meta).toMatchObject({
			kind: "snapshot",
			resolvedRepositoryIdentityRoots: ["/srv"],
		});
		expect(
			decodeShellStreamItem({
				kind: "project.removed",
				sequence: 4,
				projectId: "p",
			}),
		).toEqual({
			kind: "project.removed",
			sequence: 4,
			projectId: "p",
		});
		const item = decodeTurnItem({
			id: "i",
			type: "user_input_request",
			runId: "r",
			requestId: "q",
			questions: [
				{
					id: "color",
					header: "Color",
					question: "Which?",
					options: [{ label: "Red", description: "d", value: "red" }],
					multiSelect: true,
					allowCustomAnswer: false,
					required: true,
				},
			],
			responseMode: "message",
		});
		expect(item.questions?.[0]).toMatchObject({
			multiSelect: true,
			allowCustomAnswer: false,
			options: [{ value: "red" }],
		});
		expect(item.responseMode).toBe("message");
		expect(decodeRun({ id: "r", status: "paused_for_lunch" }).status).toBe(
			"paused_for_lunch",
		);
		expect(
			decodeThreadShell({
				id: "t",
				lastError: "boom",
				activityRunStatus: "running",
			}).lastError,
		).toBe("boom");
	});

	it("legacy model selections are normalised", () => {
		expect(
			decodeModelSelection({
				provider: "codex",
				model: "m",
				options: { effort: "high", fast: true },
			}),
		).toMatchObject({
			instanceId: "codex",
			model: "m",
			options: [
				{ id: "effort", value: "high" },
				{ id: "fast", value: true },
			],
		});
		expect(decodeModelSelection(null)).toBeNull();
	});
});
