/**
 * Held dispatches as the pool keeps them (CONTRACT.md "One pool", "Holding"): the open ones in
 * memory in start order (their heads only: the prompt stays in the state file), the limits
 * (`max_held` per client and per server), the `held` shape the tools show (position, reason,
 * detail, since, not_before) and every end a held dispatch can have (started, withdrawn, never
 * started), each told to the listeners waits and tasks hang on. Which machine takes one and when
 * is drain.ts's; how it is launched is the threads layer's.
 */
import { RightsError } from "../rights/refusal.ts";
import type { Db } from "../store/db.ts";
import type { HeldHead, HeldStatus, HeldStore } from "../store/held-store.ts";
import type { SkipReason } from "./placement.ts";

/** The longest a dispatch may be held for `not_before`: the longest task TTL (7 days). */
export const NOT_BEFORE_MAX_MS = 7 * 24 * 3600_000;
/** Ended rows are kept this long for waits and idempotency keys (the longest task TTL). */
const KEEP_ENDED_MS = NOT_BEFORE_MAX_MS;
export const DEFAULT_SERVER_MAX_HELD = 1000;
export const DEFAULT_CLIENT_MAX_HELD = 100;

/** `held` as `t3_dispatch`, `t3_thread` and `t3_threads` show it. */
export interface HeldShape {
	position: number;
	reason: SkipReason;
	detail: string;
	since: string;
	not_before: string | null;
}

export type HeldEnd = "started" | "withdrawn" | "never_started";

export interface HoldingDeps {
	db: Db;
	store: HeldStore;
	now: () => number;
	/**
	 * The machines a held dispatch could take now: its pattern (or name) within its client's
	 * current reach, by name; empty when its client reaches none (or is gone).
	 */
	candidates(head: HeldHead): readonly string[];
	/** `[server] max_held` and a client's `max_held` as configured now. */
	maxHeld(): { server: number; client(name: string): number };
	/** Inside the transaction that marks it started (its `thread.started` event). */
	onStarted?(head: HeldHead, started: StartedInfo): void;
	/**
	 * The state file's group commit: a start's mark (and its event) is written through it, off
	 * the event loop's fsync (a mark lost in a crash only replays the launch, which T3 answers
	 * with the same thread). Without it (tests), a transaction of its own.
	 */
	commit?(): (<T>(write: () => T) => Promise<T>) | undefined;
	/** Inside the transaction that marks it never started (its `thread.failed` event). */
	onNeverStarted?(head: HeldHead, error: string, watched: boolean): void;
}

/** What a start confirmed: where it runs and its first run. */
export interface StartedInfo {
	machine: string;
	project: { id: string; title: string; path: string };
	runId: string | null;
	placement: unknown;
}

export type NewHeld = Omit<
	HeldHead,
	"seq" | "status" | "placed_machine" | "command_id" | "error" | "ended_at"
> & { args: string };

export function createHolding(deps: HoldingDeps) {
	const { store, now } = deps;
	deps.db.transaction(() => store.prune(now() - KEEP_ENDED_MS))();
	/** Open rows (held or starting) by thread id, in insertion (= seq) order. */
	const open = new Map<string, HeldHead>();
	for (const head of store.open()) open.set(head.thread_id, head);
	/** The rows starting now (the drain looks at these first, without walking every row). */
	const startingRows = new Set<HeldHead>();
	for (const head of open.values())
		if (head.status === "starting") startingRows.add(head);
	/** Every thread id with a row: a thread never held is told apart without a read. */
	const known = new Set(store.ids());
	/** Rows marked started whose mark is not committed yet (read as started meanwhile). */
	const marking = new Map<string, HeldHead>();
	/** Why each open row is still held, as its last look found it. */
	const why = new Map<string, { reason: SkipReason; detail: string }>();
	const listeners = new Set<(threadId: string, end: HeldEnd) => void>();
	const changes = new Set<() => void>();
	let version = 0;
	let onlyKept: { version: number; counts: Map<string, number> } | undefined;
	const changed = () => {
		version += 1;
		for (const l of changes) l();
	};
	/** Held (not starting) rows per client, and in all: counted, never walked. */
	const heldBy = new Map<string, number>();
	let heldTotal = 0;
	/** Held rows per client and `machine` as given (they share their candidates). */
	const byKey = new Map<string, { n: number; head: HeldHead }>();
	let lastSeq = 0;
	const countHeld = (head: HeldHead, by: number) => {
		heldBy.set(head.client, (heldBy.get(head.client) ?? 0) + by);
		heldTotal += by;
		const key = `${head.client}\u0000${head.machine}`;
		const kept = byKey.get(key);
		const n = (kept?.n ?? 0) + by;
		if (n <= 0) byKey.delete(key);
		else byKey.set(key, { n, head: kept?.head ?? head });
		if (by > 0) lastSeq = Math.max(lastSeq, head.seq);
	};
	for (const head of open.values())
		if (head.status === "held") countHeld(head, 1);
	/** Details repeat (the same machines full for every row): one string each, shared. */
	const details = new Map<string, string>();
	const intern = (detail: string) => {
		const kept = details.get(detail);
		if (kept !== undefined) return kept;
		if (details.size >= 256) details.clear();
		details.set(detail, detail);
		return detail;
	};
	const ended = (threadId: string, end: HeldEnd) => {
		const head = open.get(threadId);
		if (head?.status === "held") countHeld(head, -1);
		if (head) startingRows.delete(head);
		open.delete(threadId);
		why.delete(threadId);
		changed();
		for (const l of listeners) l(threadId, end);
	};
	const heldCount = (client?: string) =>
		client === undefined ? heldTotal : (heldBy.get(client) ?? 0);

	const holding = {
		/** Open heads (held and starting), oldest first. */
		open: (): Iterable<HeldHead> => open.values(),
		/** How many rows are open (held or starting): none, and the drain has nothing to do. */
		openCount: (): number => open.size,
		/** The heads starting now (launch recorded, not yet confirmed). */
		starting: (): HeldHead[] => [...startingRows],
		/** A held dispatch (open, or ended and still kept), or undefined. */
		get: (threadId: string): HeldHead | undefined =>
			known.has(threadId)
				? (open.get(threadId) ?? marking.get(threadId) ?? store.get(threadId))
				: undefined,
		isOpen: (threadId: string) => open.has(threadId),
		/** The machines the row could take now, by name (its client's reach as configured now). */
		candidatesOf: (head: HeldHead) => deps.candidates(head),
		args: (threadId: string) => store.args(threadId),
		/**
		 * Holds a dispatch, or refuses `max_held_reached` past the client's or the server's
		 * `max_held`. Returns its head.
		 */
		hold(row: NewHeld, reason: SkipReason, detail: string): HeldHead {
			const limits = deps.maxHeld();
			const own = limits.client(row.client);
			if (heldCount(row.client) >= own)
				throw new RightsError(
					"max_held_reached",
					`your client may have ${own} dispatch${own === 1 ? "" : "es"} held at once (max_held), and ${own === 0 ? "holding is off for it" : "that many are held"}. Withdraw one (t3_interrupt on its thread_id), wait for one to start, or pass when_busy: "refuse".`,
				);
			if (heldCount() >= limits.server)
				throw new RightsError(
					"max_held_reached",
					`the server holds at most ${limits.server} dispatch${limits.server === 1 ? "" : "es"} at once ([server] max_held), and that many are held. Try again later, or pass when_busy: "refuse".`,
				);
			const seq = store.insert(row);
			const { args: _, ...rest } = row;
			const head: HeldHead = {
				...rest,
				seq,
				status: "held",
				placed_machine: null,
				command_id: null,
				error: null,
				ended_at: null,
			};
			open.set(head.thread_id, head);
			known.add(head.thread_id);
			countHeld(head, 1);
			why.set(head.thread_id, { reason, detail: intern(detail) });
			changed();
			return head;
		},
		/** Notes why a row is still held (the drain's last look). */
		note(threadId: string, reason: SkipReason, detail: string): void {
			if (open.has(threadId))
				why.set(threadId, { reason, detail: intern(detail) });
		},
		/** The `held` object a tool shows for an open row. */
		shape(head: HeldHead): HeldShape {
			const noted = why.get(head.thread_id);
			const waiting = head.not_before !== null && head.not_before > now();
			return {
				position: positionOf(head),
				reason: waiting ? "not_before" : (noted?.reason ?? "machine_cap"),
				detail: waiting
					? `not before ${new Date(head.not_before as number).toISOString()}`
					: (noted?.detail ?? "no machine has room yet"),
				since: new Date(head.since).toISOString(),
				not_before:
					head.not_before === null
						? null
						: new Date(head.not_before).toISOString(),
			};
		},
		/**
		 * held → starting, with the machine and the launch's commandId (called inside the
		 * transaction that records the dispatch); false when it was withdrawn first.
		 */
		markStarting(
			threadId: string,
			machine: string,
			commandId: string,
		): boolean {
			const head = open.get(threadId);
			if (head?.status !== "held") return false;
			if (!store.starting(threadId, machine, commandId)) return false;
			countHeld(head, -1);
			startingRows.add(head);
			head.status = "starting";
			head.placed_machine = machine;
			head.command_id = commandId;
			changed();
			return true;
		},
		/** Back to held: the launch was not recorded after all (nothing was sent). */
		unmarkStarting(threadId: string): void {
			const head = open.get(threadId);
			if (head?.status !== "starting") return;
			store.unstart(threadId);
			startingRows.delete(head);
			head.status = "held";
			countHeld(head, 1);
			head.placed_machine = null;
			head.command_id = null;
			changed();
		},
		/** starting → started, with its `thread.started` event, in one transaction. */
		markStarted(threadId: string, info: StartedInfo): void {
			const head = open.get(threadId);
			const commit = deps.commit?.();
			if (head && commit) {
				// Started now for everyone here; on disk with the next batch.
				marking.set(threadId, { ...head, status: "started" });
				ended(threadId, "started");
				commit(() => {
					if (store.end(threadId, "starting", "started", now()))
						deps.onStarted?.(head, info);
				})
					.catch(() => {})
					.finally(() => marking.delete(threadId));
				return;
			}
			let done = false;
			deps.db.transaction(() => {
				done = store.end(threadId, "starting", "started", now());
				if (done && head) deps.onStarted?.(head, info);
			})();
			if (done) ended(threadId, "started");
		},
		/** Ends a row that can never start, with its `thread.failed` event. */
		markNeverStarted(threadId: string, error: string): void {
			const head = open.get(threadId);
			if (!head) return;
			let done = false;
			deps.db.transaction(() => {
				const args = JSON.parse(store.args(threadId) ?? "{}") as {
					watch?: boolean;
				};
				done = store.end(threadId, head.status, "never_started", now(), error);
				if (done) deps.onNeverStarted?.(head, error, args.watch !== false);
			})();
			if (done) ended(threadId, "never_started");
		},
		/**
		 * Withdraws a held row (t3_interrupt): "withdrawn"; "starting" when its launch may be on
		 * its way (the caller then interrupts the run once it shows); undefined when not open.
		 */
		withdraw(threadId: string): "withdrawn" | "starting" | undefined {
			const head = open.get(threadId);
			if (!head) return undefined;
			if (head.status === "starting") return "starting";
			if (!store.end(threadId, "held", "withdrawn", now())) return "starting";
			ended(threadId, "withdrawn");
			return "withdrawn";
		},
		/** Forgets a row altogether (t3_delete of a held dispatch). */
		forget(threadId: string): void {
			const wasOpen = open.has(threadId);
			store.remove(threadId);
			known.delete(threadId);
			if (wasOpen) ended(threadId, "withdrawn");
		},
		/** Hears every end of a held row. Returns the unsubscribe. */
		onEnd(listener: (threadId: string, end: HeldEnd) => void): () => void {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		/** Hears every change of the open rows (held, starting, ended). */
		onChange(listener: () => void): () => void {
			changes.add(listener);
			return () => changes.delete(listener);
		},
		/** Changes with every row held, starting or ended (what a kept answer compares). */
		version: () => version,
		/** Held rows (not starting): all, or one client's. */
		count: heldCount,
		/** The oldest held row's `since`, or null. */
		oldestSince(client?: string): string | null {
			for (const h of open.values())
				if (
					h.status === "held" &&
					(client === undefined || h.client === client)
				)
					return new Date(h.since).toISOString();
			return null;
		},
		/** Held rows only this machine can take (`t3_machines` / `t3_usage` `held`). */
		onlyFor(machine: string): number {
			// One pass over the rows per change, for every machine at once.
			if (onlyKept?.version !== version) {
				const counts = new Map<string, number>();
				for (const h of open.values()) {
					if (h.status !== "held") continue;
					const c = deps.candidates(h);
					if (c.length === 1) {
						const only = c[0] as string;
						counts.set(only, (counts.get(only) ?? 0) + 1);
					}
				}
				onlyKept = { version, counts };
			}
			return onlyKept.counts.get(machine) ?? 0;
		},
		status: (threadId: string): HeldStatus | undefined =>
			holding.get(threadId)?.status,
		/** The status the state file has (a record rolled back leaves it held). */
		storedStatus: (threadId: string): HeldStatus | undefined =>
			store.get(threadId)?.status,
	};

	/** 1 + held rows created earlier that could take a machine this one can take. */
	function positionOf(head: HeldHead): number {
		const mine = new Set(deps.candidates(head));
		// The newest held row (a dispatch's own answer): every other held row is earlier, counted
		// per client and pattern instead of row by row.
		if (head.status === "held" && head.seq === lastSeq) {
			let n = 0;
			for (const { n: count, head: sample } of byKey.values())
				if (deps.candidates(sample).some((m) => mine.has(m))) n += count;
			return n;
		}
		let n = 1;
		for (const h of open.values()) {
			if (h.seq >= head.seq) break;
			if (h.status !== "held") continue;
			if (deps.candidates(h).some((m) => mine.has(m))) n++;
		}
		return n;
	}

	return holding;
}

export type Holding = ReturnType<typeof createHolding>;
