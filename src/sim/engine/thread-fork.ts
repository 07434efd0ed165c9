/**
 * `thread.fork` (PROTOCOL.md §6.9, RELEASED-0.1.md §3): a new thread in the source's project
 * and checkout that carries the source's conversation up to a settled run (`sourcePoint`
 * `run`) or its latest settled one (`latest_stable`). The source is not touched. The carried
 * messages are what the fork's agent remembers (the "what do you remember" prompt says them).
 */
import { TERMINAL_RUN_STATUSES } from "../../t3/model.ts";
import { placeFork } from "../repo/worktrees.ts";
import type { Row } from "./rows.ts";
import type { Store, ThreadState } from "./store.ts";

export interface CarriedMessage {
	role: string;
	text: string;
}

const carried = new WeakMap<ThreadState, CarriedMessage[]>();

/** The conversation a forked thread starts with (empty for any other thread). */
export function carriedConversation(thread: ThreadState): CarriedMessage[] {
	return carried.get(thread) ?? [];
}

export const FORK_REQUIRED = [
	"commandId",
	"createdBy",
	"creationSource",
	"sourceThreadId",
	"targetThreadId",
	"sourcePoint",
];

export function forkThread(
	store: Store,
	newThread: (
		input: Record<string, unknown>,
		creationSource: string,
	) => ThreadState,
	c: Record<string, unknown>,
): number | string {
	const sourceId = String(c.sourceThreadId);
	const source = store.threads.get(sourceId);
	if (!source || source.app.deletedAt)
		return `Failed to load orchestration projection for thread ${sourceId}.`;
	const targetId = String(c.targetThreadId);
	if (store.threads.has(targetId)) return `Thread ${targetId} already exists.`;
	const point = (c.sourcePoint ?? {}) as Row;
	const runs = [...source.rows.runs].sort(
		(a, b) => Number(a.ordinal) - Number(b.ordinal),
	);
	let upTo: Row | undefined;
	if (point.type === "run") {
		upTo = runs.find((r) => r.id === point.runId);
		if (!upTo)
			return `Run ${String(point.runId)} was not found in thread ${sourceId}.`;
		if (!TERMINAL_RUN_STATUSES.has(String(upTo.status)))
			return `Run ${String(point.runId)} has not settled; fork from a settled run or the latest stable point.`;
	} else if (point.type === "latest_stable") {
		upTo = runs
			.filter((r) => TERMINAL_RUN_STATUSES.has(String(r.status)))
			.at(-1);
	} else {
		return `Fork source point ${JSON.stringify(point.type)} is not supported.`;
	}
	const ordinal = upTo ? Number(upTo.ordinal) : 0;
	const ordinalOf = new Map(runs.map((r) => [r.id, Number(r.ordinal)]));
	const fork = newThread(
		{
			threadId: targetId,
			projectId: source.app.projectId,
			title:
				typeof c.title === "string" && c.title
					? c.title
					: `Fork of ${String(source.app.title)}`,
			modelSelection: source.app.modelSelection,
			runtimeMode: source.app.runtimeMode,
			interactionMode: source.app.interactionMode,
			branch: source.app.branch ?? null,
			worktreePath: source.app.worktreePath ?? null,
		},
		String(c.creationSource),
	);
	carried.set(
		fork,
		source.rows.messages
			.filter((m) => (ordinalOf.get(String(m.runId)) ?? Infinity) <= ordinal)
			.map((m) => ({ role: String(m.role), text: String(m.text) })),
	);
	placeFork(source, fork, store);
	fork.app = {
		...fork.app,
		lineage: {
			parentThreadId: source.id,
			relationshipToParent: "fork",
			rootThreadId:
				(source.app.lineage as Row | undefined)?.rootThreadId ?? source.id,
		},
		forkedFrom: { threadId: source.id, runId: upTo?.id ?? null },
	};
	return store.appendThreadEvent(fork, "thread.forked", {
		providerInstanceId: String(fork.app.providerInstanceId),
	});
}
