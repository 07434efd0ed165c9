/** The shell read model (PROTOCOL.md §7.2): projects and thread shells, as sent and as held. */
import type {
	PendingRuntimeRequest,
	ProjectShell,
	ShellSnapshot,
	ThreadShell,
} from "../model.ts";
import {
	isRecord,
	type Json,
	list,
	num,
	record,
	requireId,
	str,
	strOrNull,
} from "./json.ts";
import { decodeModelSelection } from "./model-selection.ts";

export function decodeProjectShell(raw: unknown): ProjectShell {
	const obj = record(raw, "project");
	return {
		...obj,
		id: requireId(obj, "project"),
		title: str(obj.title) ?? "",
		workspaceRoot: str(obj.workspaceRoot) ?? "",
		defaultModelSelection: decodeModelSelection(obj.defaultModelSelection),
	};
}

function decodePending(raw: unknown): PendingRuntimeRequest | null {
	if (!isRecord(raw) || typeof raw.id !== "string") return null;
	const out: PendingRuntimeRequest = {
		...raw,
		id: raw.id,
		kind: str(raw.kind) ?? "unknown",
	};
	return out;
}

/**
 * A thread shell (§7.2). Also used for the projection's `thread` (an AppThread without the
 * activity summary): missing activity fields default to "no run, idle", and
 * `decodeThreadProjection` then derives them from the projection's rows.
 */
export function decodeThreadShell(raw: unknown): ThreadShell {
	const obj = record(raw, "thread");
	const lvm = obj.latestVisibleMessage;
	return {
		...obj,
		id: requireId(obj, "thread"),
		projectId: str(obj.projectId) ?? "",
		title: str(obj.title) ?? "",
		modelSelection: decodeModelSelection(obj.modelSelection),
		latestRunId: strOrNull(obj.latestRunId),
		activeRunId: strOrNull(obj.activeRunId),
		status: str(obj.status) ?? "idle",
		pendingRuntimeRequest: decodePending(obj.pendingRuntimeRequest),
		limitRecovery: decodeLimitRecovery(obj.limitRecovery),
		backgroundTaskCount: taskCount(obj.pendingBackgroundTasks),
		latestVisibleMessage:
			isRecord(lvm) && typeof lvm.id === "string"
				? {
						...lvm,
						id: lvm.id,
						role: str(lvm.role) ?? "unknown",
						text: str(lvm.text) ?? "",
					}
				: null,
	};
}

/**
 * Released 0.1.x: T3's plan to resume after a usage limit (idx 70102248590), kept in its known
 * keys only; absent on pre-release shells.
 */
function decodeLimitRecovery(raw: unknown): ThreadShell["limitRecovery"] {
	if (raw === null) return null;
	if (!isRecord(raw)) return undefined;
	const kept: NonNullable<ThreadShell["limitRecovery"]> = {};
	if (typeof raw.runId === "string") kept.runId = raw.runId;
	if (typeof raw.resetAt === "string") kept.resetAt = raw.resetAt;
	if (typeof raw.autoResume === "boolean") kept.autoResume = raw.autoResume;
	return kept;
}

/** How many background tasks a shell lists: the held shell keeps the count, not the list. */
function taskCount(raw: unknown): number | undefined {
	return Array.isArray(raw) ? raw.length : undefined;
}

/** The thread-shell fields the connector reads; everything else stays on the wire. */
const SHELL_FIELDS = [
	"id",
	"projectId",
	"title",
	"providerInstanceId",
	"modelSelection",
	"runtimeMode",
	"interactionMode",
	"latestRunId",
	"activeRunId",
	"status",
	"pendingRuntimeRequest",
	// Not `createdAt` nor `latestUserMessageAt`: nothing reads them, and real threads carry
	// both as times of their own, two strings a thread (~130 bytes) for each of 100 000.
	// Not `lastError`: a run's error is read from its projection (run-outcome.ts), and a held
	// copy was a whole error text (stack traces, provider dumps) per failed thread, unbounded.
	"lastErrorClass",
	"usageLimitResetAt",
	"limitRecovery",
	"snoozedUntil",
	"backgroundTaskCount",
	"branch",
	"worktreePath",
	"pullRequests",
	"branchPullRequest",
	"updatedAt",
	"archivedAt",
	"deletedAt",
	// Released 0.1.x shells (REVIEW-fa93027.md §1): lineage of forks, pins, the activity status.
	"forkedFrom",
	"lineage",
	"pinnedAt",
	"activityRunStatus",
	"latestUserAuthoredMessageAt",
] as const;
const HELD_MESSAGE_CHARS = 500;

/**
 * The first HELD_MESSAGE_CHARS characters of a latest message, as a string of their own.
 * JavaScriptCore's `slice` shares the whole original: a held 500-character cut of a 10 KB
 * assistant reply kept all 10 KB alive for as long as the thread was held (a pre-release fleet
 * of 100 000 threads with 2 000-character replies: 2.7 KB a thread, 1.4 KB with the copy). The
 * cut is padded by one character, which builds a fresh string, and that one is cut (~1 µs, most
 * of it allocating the copy; JSON.parse of the cut does the same slower when cold). A message
 * short enough is the decoder's own string already.
 */
function heldText(text: string): string {
	if (text.length <= HELD_MESSAGE_CHARS) return text;
	return text
		.slice(0, HELD_MESSAGE_CHARS)
		.padEnd(HELD_MESSAGE_CHARS + 1)
		.slice(0, -1);
}

/**
 * A held latest message: its role and (the start of) its text, which is all its readers take
 * (the wait's status line, `query`). Not its id and time: two strings more per thread that ran.
 */
function heldMessage(
	role: string,
	text: string,
): NonNullable<ThreadShell["latestVisibleMessage"]> {
	return { role, text: heldText(text) };
}

/**
 * A thread shell trimmed for holding in memory for every thread of every machine: a newer
 * server's extra fields and a long latest message would otherwise be kept thousands of times.
 */
export function compactThreadShell(thread: ThreadShell): ThreadShell {
	const message = thread.latestVisibleMessage;
	return heldShell(
		(key) => thread[key],
		message ? heldMessage(message.role, message.text) : null,
	);
}

type ShellField = (typeof SHELL_FIELDS)[number];

/**
 * A lineage with no parent, naming the thread itself as its root (what T3 sends for every thread
 * that is no fork: `{parentThreadId: null, relationshipToParent: null, rootThreadId: <id>}`):
 * nothing reads it (fork-origin.ts reads a parent), and it was an object per held thread.
 */
function selfRooted(lineage: unknown, id: unknown): boolean {
	if (!isRecord(lineage) || lineage.rootThreadId !== id) return false;
	for (const key in lineage)
		if (key !== "rootThreadId" && lineage[key] != null) return false;
	return true;
}

/** The fields a listing reads of every held shell, set first by `heldShell`. */
const FIRST_FIELDS = [
	"id",
	"projectId",
	"title",
	"modelSelection",
	"latestRunId",
	"activeRunId",
	"status",
	"pendingRuntimeRequest",
	"updatedAt",
	"deletedAt",
] as const satisfies readonly ShellField[];
const FIRST = new Set<string>(FIRST_FIELDS);
const LATER_FIELDS = SHELL_FIELDS.filter((key) => !FIRST.has(key));

/**
 * A held shell: the fields every listing reads first, in one object literal (one shape for them
 * whatever else a thread carries, in the object's own slots), then the fields a thread may lack,
 * only when set: T3 sends most of them as null for most threads (branch, worktree, archive,
 * errors), and a null kept was a slot per field per thread (~527 bytes a thread, ~402 without).
 * Readers take a missing field as null.
 */
function heldShell(
	value: (key: ShellField) => unknown,
	latestVisibleMessage: unknown,
): ThreadShell {
	const out: Record<string, unknown> = {
		id: value("id"),
		projectId: value("projectId"),
		title: value("title"),
		modelSelection: value("modelSelection"),
		latestRunId: value("latestRunId"),
		activeRunId: value("activeRunId"),
		status: value("status"),
		pendingRuntimeRequest: value("pendingRuntimeRequest"),
		updatedAt: value("updatedAt"),
		deletedAt: value("deletedAt"),
		latestVisibleMessage,
	};
	for (const key of LATER_FIELDS) {
		const v = value(key);
		if (v != null && !(key === "lineage" && selfRooted(v, out.id)))
			out[key] = v;
	}
	shareHeld(out);
	return out as ThreadShell;
}

/** How the thread-shell fields that are not plain pass-through values decode (§7.2). */
const SHELL_DECODERS: Partial<
	Record<(typeof SHELL_FIELDS)[number], (obj: Json) => unknown>
> = {
	id: (obj) => requireId(obj, "thread"),
	projectId: (obj) => str(obj.projectId) ?? "",
	title: (obj) => str(obj.title) ?? "",
	modelSelection: (obj) => decodeModelSelection(obj.modelSelection),
	latestRunId: (obj) => strOrNull(obj.latestRunId),
	activeRunId: (obj) => strOrNull(obj.activeRunId),
	status: (obj) => str(obj.status) ?? "idle",
	pendingRuntimeRequest: (obj) => decodePending(obj.pendingRuntimeRequest),
	limitRecovery: (obj) => decodeLimitRecovery(obj.limitRecovery),
	backgroundTaskCount: (obj) => taskCount(obj.pendingBackgroundTasks),
	pullRequests: (obj) =>
		Array.isArray(obj.pullRequests)
			? obj.pullRequests.map(keptPullRequest).filter((p) => p !== undefined)
			: undefined,
	branchPullRequest: (obj) => keptPullRequest(obj.branchPullRequest),
};

/** A linked pull request (shell `pullRequests`, `branchPullRequest`) in the keys we show. */
function keptPullRequest(raw: unknown): Json | undefined {
	if (!isRecord(raw)) return undefined;
	const kept: Json = {};
	for (const key of ["number", "url", "state", "title"])
		if (raw[key] !== undefined) kept[key] = raw[key];
	return kept;
}

/** Distinct model selections held, shared by every thread that uses one (a fleet has few). */
const heldSelections = new Map<string, unknown>();
const MAX_HELD_SELECTIONS = 1_024;

/**
 * Held shells share equal values instead of keeping a copy per thread (100 000 threads hold a
 * handful of model selections).
 */
function shareHeld(out: Record<string, unknown>): void {
	const selection = out.modelSelection as Record<string, unknown> | null;
	if (isRecord(selection)) {
		const keys = Object.keys(selection);
		const key =
			keys.length === 2 && "instanceId" in selection && "model" in selection
				? `${selection.instanceId}\u0000${selection.model}`
				: JSON.stringify(selection);
		const held = heldSelections.get(key);
		if (held) out.modelSelection = held;
		else if (heldSelections.size < MAX_HELD_SELECTIONS)
			heldSelections.set(key, selection);
	}
}

/**
 * `compactThreadShell(decodeThreadShell(raw))` without the full copy in between: a snapshot
 * decodes thousands of threads at once, and every full copy is garbage a moment later.
 */
export function decodeHeldThreadShell(raw: unknown): ThreadShell {
	const obj = record(raw, "thread");
	const lvm = obj.latestVisibleMessage;
	return heldShell(
		(key) => {
			const decode = SHELL_DECODERS[key];
			return decode ? decode(obj) : obj[key];
		},
		isRecord(lvm) && typeof lvm.id === "string"
			? heldMessage(str(lvm.role) ?? "unknown", str(lvm.text) ?? "")
			: null,
	);
}

/**
 * A shell snapshot (§7). Its threads come as held (`decodeHeldThreadShell`): the only use of a
 * snapshot is to replace the threads held in memory, and it lists every thread of a machine.
 */
export function decodeShellSnapshot(raw: unknown): ShellSnapshot {
	const obj = record(raw, "shell snapshot");
	return {
		...obj,
		snapshotSequence: num(obj.snapshotSequence) ?? 0,
		projects: list(obj.projects, decodeProjectShell),
		threads: list(obj.threads, decodeHeldThreadShell),
		archivedThreads: list(obj.archivedThreads, decodeHeldThreadShell),
	};
}
