/**
 * `t3_diff`: what a run (or the whole thread) changed, from T3's checkpoint diffs
 * (`getTurnDiff` / `getFullThreadDiff`, PROTOCOL.md §5; turn count = run ordinal). A run without
 * a checkpoint (interrupted, failed, still going) has no diff: that is a result with
 * `available: false` and the reason, not an error. The unified diff is paged at line boundaries;
 * the cursor pins the exact checkpoint range, so later runs never shift the pages.
 */
import { T3Error } from "../../t3/machine-api.ts";
import { BUSY_RUN_STATUSES, type Run } from "../../t3/model.ts";
import { maskSecrets } from "../../util/redact.ts";
import { t3Reason } from "../control/manage.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { locateThread, readDetail } from "../locate.ts";
import { invalidCursor, openCursor, sealCursor } from "./cursor.ts";

export const DIFF_PAGE_BYTES = 60_000;

export interface DiffFile {
	path: string;
	additions: number;
	deletions: number;
}

export interface DiffResult {
	thread_id: string;
	run_id: string | null;
	available: boolean;
	reason: string | null;
	files: DiffFile[];
	diff: string;
	truncated: boolean;
	next_cursor: string | null;
}

interface Range {
	/** undefined: from the thread's start (getFullThreadDiff). */
	from: number | undefined;
	to: number;
}

interface CursorBody {
	t: string;
	r: string;
	w: boolean;
	f: number | null;
	n: number;
	o: number;
}

const TOOL = "t3_diff";

/** The cursor's body, once its signature checked out (`openCursor`). */
function decodeCursor(deps: ThreadDeps, cursor: string): CursorBody {
	const body = openCursor(deps.db, TOOL, cursor) as CursorBody;
	if (
		typeof body?.t === "string" &&
		typeof body.r === "string" &&
		typeof body.w === "boolean" &&
		(body.f === null || (Number.isInteger(body.f) && body.f >= 0)) &&
		Number.isInteger(body.n) &&
		body.n >= 0 &&
		Number.isInteger(body.o) &&
		body.o >= 0
	)
		return body;
	throw invalidCursor();
}

/** Per-file counts of a unified diff (`diff --git` sections; `+++`/`---` headers not counted). */
export function summarizeDiff(diff: string): DiffFile[] {
	const files: DiffFile[] = [];
	let current: DiffFile | undefined;
	let inHunk = false;
	for (const line of diff.split("\n")) {
		if (line.startsWith("diff --git ")) {
			const match = / b\/(.*)$/.exec(line);
			current = {
				path: match?.[1] ?? line.slice(11),
				additions: 0,
				deletions: 0,
			};
			files.push(current);
			inHunk = false;
		} else if (!current) {
		} else if (line.startsWith("@@")) {
			inHunk = true;
		} else if (!inHunk) {
			// Renames and deletions name the path in the headers.
			if (line.startsWith("+++ b/")) current.path = line.slice(6);
			else if (line.startsWith("rename to ")) current.path = line.slice(10);
		} else if (line.startsWith("+")) current.additions += 1;
		else if (line.startsWith("-")) current.deletions += 1;
	}
	return files;
}

/** One page: at most `max` bytes from `offset`, cut after the last whole line that fits. */
export function pageOf(
	bytes: Uint8Array,
	offset: number,
	max = DIFF_PAGE_BYTES,
): { text: string; end: number } {
	let end = Math.min(bytes.length, offset + max);
	if (end < bytes.length) {
		const newline = bytes.lastIndexOf(10, end - 1);
		if (newline >= offset) end = newline + 1;
		// One line longer than a page: cut inside it, never inside a UTF-8 character.
		else
			while (end > offset + 1 && ((bytes[end] as number) & 0xc0) === 0x80)
				end -= 1;
	}
	return {
		text: new TextDecoder().decode(bytes.subarray(offset, end)),
		end,
	};
}

const runLabel = (run: Run) => `run ${run.ordinal} (${run.status})`;

/** The checkpoint range for the run or whole thread, or why there is none. */
function rangeFor(
	runs: Run[],
	target: Run,
	wholeThread: boolean,
): Range | string {
	if (BUSY_RUN_STATUSES.has(target.status)) {
		const state =
			target.status === "queued"
				? `run ${target.ordinal} is queued and has not started`
				: `${runLabel(target)} is still going`;
		// The default is the latest run: name the way to what an earlier run already changed.
		const earlier =
			target.ordinal > 1
				? " To see what an earlier run changed, pass its run_id (t3_thread with turns > 1 lists them)."
				: "";
		return `${state}; T3 has its diff once it completes (call t3_wait first).${earlier}`;
	}
	const checkpointed = (r: Run) =>
		r.status === "completed" || (r.checkpointId ?? null) !== null;
	if (wholeThread) {
		const last = runs
			.filter((r) => r.ordinal <= target.ordinal && checkpointed(r))
			.at(-1);
		if (!last)
			return "No run of this thread up to the one asked for has a checkpoint yet (interrupted and failed runs get none), so T3 has no diff for it.";
		return { from: undefined, to: last.ordinal };
	}
	const previous = runs
		.filter((r) => r.ordinal < target.ordinal && checkpointed(r))
		.at(-1);
	// T3 refuses turn 0 as a start (OBSERVED.md §5.8): a first run is diffed from the thread's start.
	return { from: previous?.ordinal, to: target.ordinal };
}

export async function readDiff(
	deps: ThreadDeps,
	args: {
		threadId: string;
		runId?: string;
		wholeThread?: boolean;
		cursor?: string;
	},
): Promise<DiffResult> {
	const { threadId } = args;
	const wholeThread = args.wholeThread === true;

	const empty = (runId: string | null, reason: string): DiffResult => ({
		thread_id: threadId,
		run_id: runId,
		available: false,
		reason,
		files: [],
		diff: "",
		truncated: false,
		next_cursor: null,
	});

	const cursor =
		args.cursor === undefined ? undefined : decodeCursor(deps, args.cursor);
	if (
		cursor &&
		(cursor.t !== threadId ||
			cursor.w !== wholeThread ||
			(args.runId !== undefined && cursor.r !== args.runId))
	)
		throw invalidCursor(
			"it belongs to another t3_diff request: repeat that request's thread_id, run_id and whole_thread with it",
		);
	const located = await locateThread(deps, threadId);
	const { projection } = await readDetail(located, true);
	const runs = [...projection.runs].sort((a, b) => a.ordinal - b.ordinal);
	const runId = cursor?.r ?? args.runId;
	const target = runId ? runs.find((r) => r.id === runId) : runs.at(-1);
	if (!target) {
		if (runId)
			throw new ThreadError(
				`run_id: "${runId}" is not a run of thread "${threadId}". Its runs: ${runs.map((r) => `${r.id} (${r.status})`).join(", ") || "none"}. Omit run_id for the latest run.`,
			);
		return empty(null, "The thread has no runs yet, so nothing changed.");
	}

	let range: Range;
	if (cursor) range = { from: cursor.f ?? undefined, to: cursor.n };
	else {
		const found = rangeFor(runs, target, wholeThread);
		if (typeof found === "string") return empty(target.id, found);
		range = found;
	}

	let diff: string;
	try {
		({ diff } = await located.entry.machine.turnDiff({
			threadId,
			toTurnCount: range.to,
			...(range.from === undefined ? {} : { fromTurnCount: range.from }),
		}));
	} catch (error) {
		if (error instanceof T3Error && error.code === "REJECTED")
			return empty(
				target.id,
				`T3 has no diff for ${wholeThread ? "this thread" : runLabel(target)}: no checkpoint was captured (interrupted and failed runs, and some first runs, get none). T3 says: ${t3Reason(error)}`,
			);
		throw error;
	}

	// Masked whole before paging, so no page boundary cuts a secret (CONTRACT.md "HTTP").
	diff = maskSecrets(diff);
	const bytes = new TextEncoder().encode(diff);
	const offset = cursor?.o ?? 0;
	// T3 answered a shorter diff for the same range than when the cursor was made.
	if (offset > bytes.length) throw invalidCursor("the diff changed since");
	const page = pageOf(bytes, offset);
	const more = page.end < bytes.length;
	return {
		thread_id: threadId,
		run_id: target.id,
		available: true,
		reason: null,
		files: summarizeDiff(diff),
		diff: page.text,
		truncated: more,
		next_cursor: more
			? sealCursor(deps.db, TOOL, {
					t: threadId,
					r: target.id,
					w: wholeThread,
					f: range.from ?? null,
					n: range.to,
					o: page.end,
				})
			: null,
	};
}
