/**
 * `t3_threads` `query` in message text: T3's `orchestration.searchThreads` on every online
 * machine that has it (RELEASED-0.1.md §3), bounded by a timeout: on servers whose shells carry
 * no latest message (the newest T3) the only message text a query reaches. A machine without the
 * RPC (DEFECT) is remembered until it reconnects, so later queries cost it nothing; answers are kept
 * until the machine's shell changes (a new message changes its thread), so paging through a
 * search, or repeating one, does not ask T3 again.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { Machine } from "../../t3/machine-api.ts";
import type { SearchMatch } from "../../t3/model.ts";
import { maskAndCap, redact } from "../../util/redact.ts";
import { isUnknownMethod } from "../unsupported.ts";

/** T3's bounds on the query (shorter or longer queries never reach T3) and its largest limit. */
export const SEARCH_MIN = 2;
export const SEARCH_MAX = 200;
const SEARCH_LIMIT = 50;
const SNIPPET_MAX = 240;
export const SEARCH_TIMEOUT_MS = 2_000;
/** A kept answer is asked again after this long even if nothing changed. */
const KEEP_MS = 60_000;
const KEEP_QUERIES = 32;

/** How a row was found in its messages: shown as the row's `match`. */
export interface MessageMatch {
	role: string;
	snippet: string;
}

interface Memo {
	unsupported: boolean;
	answers: Map<string, { at: number; matches: Map<string, MessageMatch> }>;
	/** `carriesMessages`, until the machine's shell changes. */
	carries?: boolean;
}

const memos = new WeakMap<Machine, Memo>();

function memoOf(machine: Machine): Memo {
	let memo = memos.get(machine);
	if (!memo) {
		const fresh: Memo = { unsupported: false, answers: new Map() };
		machine.onChange((change) => {
			if (change.kind === "config" || change.kind === "synchronized") return;
			fresh.answers.clear();
			fresh.carries = undefined;
			// A reconnect may reach an upgraded server.
			if (change.kind === "state") fresh.unsupported = false;
		});
		memos.set(machine, fresh);
		memo = fresh;
	}
	return memo;
}

/**
 * Whether the machine's thread shells carry their latest message, which `query` also matches:
 * the newest T3 sends `latestVisibleMessage: null` on every shell ("Thread detail owns message
 * bodies", idx 70189692800), so a thread that ran but has none says it does not. Read only
 * when search cannot cover for it, and kept until the shell changes: every query on a
 * pre-release fleet asked it of every machine, a walk of every thread (~2 ms a call at 500
 * machines and 100 000 threads).
 */
function carriesMessages(machine: Machine): boolean {
	const memo = memoOf(machine);
	memo.carries ??= anyCarries(machine);
	return memo.carries;
}

function anyCarries(machine: Machine): boolean {
	let ran = false;
	for (const thread of machine.threads()) {
		if (thread.latestVisibleMessage) return true;
		if (thread.latestRunId !== null) ran = true;
	}
	return !ran;
}

/** Per thread id, its newest matching message (T3 answers newest first). */
function byThread(matches: SearchMatch[]): Map<string, MessageMatch> {
	const out = new Map<string, MessageMatch>();
	for (const m of matches)
		if (!out.has(m.threadId))
			out.set(m.threadId, {
				role: m.source,
				// T3 text, cut by T3: masked like every T3 text (a cut secret's piece too).
				snippet: maskAndCap(m.snippet, SNIPPET_MAX, "…"),
			});
	return out;
}

export interface Unavailable {
	machine: string;
	state: string;
	reason: string | null;
}

/**
 * Per machine, the threads whose messages hold `query` (none for a machine without the RPC,
 * or for a query T3 would refuse); a machine that fails or does not answer in time is added
 * to `unavailable` with why, its other rows still listed.
 */
export async function searchMessages(
	online: FleetMachine[],
	query: string | undefined,
	unavailable: Unavailable[],
	options: { now: () => number; timeoutMs?: number },
): Promise<Map<FleetMachine, Map<string, MessageMatch>>> {
	const out = new Map<FleetMachine, Map<string, MessageMatch>>();
	if (
		query === undefined ||
		query.length < SEARCH_MIN ||
		query.length > SEARCH_MAX
	)
		return out;
	const timeoutMs = options.timeoutMs ?? SEARCH_TIMEOUT_MS;
	// Titles and latest messages are matched locally; without those messages only titles are,
	// and the caller should know.
	const titlesOnly = (entry: FleetMachine) => {
		if (!carriesMessages(entry.machine))
			unavailable.push({
				machine: entry.config.name,
				state: entry.machine.status().state,
				reason:
					"its messages cannot be searched: this T3 server has no message search and its thread list carries no latest messages (only titles were searched there)",
			});
	};
	const ask = async (entry: FleetMachine, memo: Memo) => {
		const { machine } = entry;
		try {
			const matches = byThread(
				await (machine.searchThreads as NonNullable<Machine["searchThreads"]>)({
					query,
					limit: SEARCH_LIMIT,
					timeoutMs,
				}),
			);
			out.set(entry, matches);
			memo.answers.delete(query);
			memo.answers.set(query, { at: options.now(), matches });
			if (memo.answers.size > KEEP_QUERIES)
				memo.answers.delete(memo.answers.keys().next().value as string);
		} catch (error) {
			// Only a server without the method turns search off; a defect of this one query
			// (T3 refusing its text) leaves it on for the next.
			if (isUnknownMethod(error)) {
				memo.unsupported = true;
				titlesOnly(entry);
				return;
			}
			unavailable.push({
				machine: entry.config.name,
				state: machine.status().state,
				reason: `its message search did not answer (only titles${carriesMessages(machine) ? " and latest messages" : ""} were searched there): ${error instanceof Error ? redact(error.message) : "unknown error"}`,
			});
		}
	};
	// Kept answers and machines without search are settled here, at once: only the machines
	// T3 must be asked cost a promise (a repeated or paged query of 500 machines costs none).
	const asks: Promise<void>[] = [];
	let now: number | undefined;
	for (const entry of online) {
		const memo = memoOf(entry.machine);
		if (!entry.machine.searchThreads || memo.unsupported) {
			titlesOnly(entry);
			continue;
		}
		const kept = memo.answers.get(query);
		if (kept) {
			// The clock read once, when a kept answer is first looked at.
			now ??= options.now();
			if (now - kept.at < KEEP_MS) {
				out.set(entry, kept.matches);
				continue;
			}
		}
		asks.push(ask(entry, memo));
	}
	if (asks.length > 0) await Promise.all(asks);
	return out;
}
