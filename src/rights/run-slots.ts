/**
 * Run slots: caps on busy threads that hold under concurrency (CONTRACT.md "Trust round
 * three"). A cap counts the threads its shells show busy (a run preparing, starting, running,
 * waiting, or queued and not held; one per thread) plus the dispatches being sent. Reading the
 * shells alone let a burst through: every call read the count before any had sent. So a slot is
 * taken synchronously, before anything is sent, and held until the shell shows what the
 * dispatch did; a message into a thread already busy adds nothing.
 *
 * One slot can hold several caps at once (the client's `max_active_runs` and, with "One pool",
 * the machine's): it is taken in all of them or in none.
 */
import type { Fleet } from "../fleet/fleet.ts";
import { BUSY_RUN_STATUSES, type ThreadShell } from "../t3/model.ts";

/** A thread a cap counts: where it lives. */
export interface CountedThread {
	threadId: string;
	machine: string;
	/** The status last stored for it: counts while its machine's shell is not synchronized. */
	storedStatus?: string | null;
}

export interface RunCap {
	/** Names the counter: "client:agent", "machine:mac". */
	key: string;
	cap: number;
	/** The threads counted against it, busy or not (busy ones count). */
	threads(): Iterable<CountedThread>;
	/**
	 * The ids of its busy threads, already judged and kept current (pool/capacity.ts keeps one
	 * per machine from its shell changes): counting then reads this set instead of every shell.
	 */
	busy?(): ReadonlySet<string>;
	/** The refusal when the cap is reached, naming the threads that hold it. */
	refuse(holding: string[]): Error;
}

/** What the ledger reads of the fleet: a thread's shell, and whether its machine's is current. */
export interface ShellView {
	/** The shell, or "unknown" while the machine's shell is not synchronized (offline, starting). */
	shell(machine: string, threadId: string): ThreadShell | undefined | "unknown";
}

export interface RunSlot {
	/** The thread this dispatch is for, once known (a new thread's id is minted later). */
	bind(threadId: string, machine: string, commandId?: string): void;
	/** The command went out, or may have: held until the shell shows the run. */
	sent(): void;
	/** Nothing was started (refused before or by T3): given back at once. */
	release(): void;
}

/** The whole fleet's shells (every project: a cap counts threads outside any allowlist too). */
export function fleetShells(fleet: Fleet): ShellView {
	return {
		shell(machine, threadId) {
			const entry = fleet.get(machine);
			if (entry?.machine.status().state !== "online") return "unknown";
			return entry.machine.thread(threadId);
		},
	};
}

/** A send that left no trace on a synchronized shell after this long is taken as never made. */
export const UNSEEN_SEND_MS = 60_000;

interface Reservation {
	threadId?: string;
	machine?: string;
	/** The thread's latest run when the slot was taken: a different one is the dispatch's. */
	baseline: string | null;
	sentAt?: number;
	released: boolean;
}

export const isBusyShell = (shell: ThreadShell): boolean =>
	shell.activeRunId !== null || BUSY_RUN_STATUSES.has(shell.status);

const NO_SLOT: RunSlot = {
	bind: () => undefined,
	sent: () => undefined,
	release: () => undefined,
};

export function createRunSlots(view: ShellView, now: () => number) {
	const held = new Map<string, Set<Reservation>>();
	/** Counts every slot taken, given back or seen through (what a kept answer compares). */
	let changes = 0;

	/** Whether the shell now shows what the reservation's dispatch did (then it counts itself). */
	function caughtUp(r: Reservation): boolean {
		if (r.released) return true;
		if (r.sentAt === undefined || !r.threadId || !r.machine) return false;
		const shell = view.shell(r.machine, r.threadId);
		if (shell === "unknown") return false;
		if (shell === undefined) return now() - r.sentAt >= UNSEEN_SEND_MS;
		return shell.latestRunId !== null && shell.latestRunId !== r.baseline;
	}

	function isBusy(t: CountedThread): boolean {
		const shell = view.shell(t.machine, t.threadId);
		if (shell === "unknown")
			return t.storedStatus != null && BUSY_RUN_STATUSES.has(t.storedStatus);
		return shell !== undefined && isBusyShell(shell);
	}

	/** The threads holding a cap now: busy ones, plus reservations not yet shown (by thread). */
	function holding(cap: Pick<RunCap, "key" | "threads">): {
		ids: Set<string>;
		pending: number;
	} {
		const ids = new Set<string>();
		for (const t of cap.threads()) if (isBusy(t)) ids.add(t.threadId);
		let pending = 0;
		const mine = held.get(cap.key);
		for (const r of mine ?? []) {
			if (caughtUp(r)) {
				mine?.delete(r);
				changes += 1;
				continue;
			}
			if (r.threadId === undefined) pending++;
			else ids.add(r.threadId);
		}
		return { ids, pending };
	}

	return {
		/**
		 * Takes a slot in every cap, or throws the first cap's refusal and takes none. A dispatch
		 * into `target`, a thread already busy or held by another dispatch, adds nothing.
		 */
		take(
			caps: RunCap[],
			target?: { threadId: string; machine: string },
		): RunSlot {
			if (caps.length === 0) return NO_SLOT;
			let baseline: string | null = null;
			if (target) {
				const shell = view.shell(target.machine, target.threadId);
				if (shell !== "unknown" && shell !== undefined) {
					if (isBusyShell(shell)) return NO_SLOT;
					baseline = shell.latestRunId;
				}
			}
			const counting: RunCap[] = [];
			for (const cap of caps) {
				const { ids, pending } = holding(cap);
				if (target && ids.has(target.threadId)) continue;
				if (ids.size + pending + 1 > cap.cap)
					throw cap.refuse([
						...ids,
						...(pending > 0 ? [`${pending} being dispatched`] : []),
					]);
				counting.push(cap);
			}
			if (counting.length === 0) return NO_SLOT;
			const r: Reservation = {
				...(target ?? {}),
				baseline,
				released: false,
			};
			changes += 1;
			for (const cap of counting) {
				let set = held.get(cap.key);
				if (!set) {
					set = new Set();
					held.set(cap.key, set);
				}
				set.add(r);
			}
			return {
				bind(threadId, machine) {
					if (r.threadId === undefined) {
						r.threadId = threadId;
						r.machine = machine;
					}
				},
				sent() {
					r.sentAt ??= now();
				},
				release() {
					changes += 1;
					r.released = true;
					for (const cap of counting) held.get(cap.key)?.delete(r);
				},
			};
		},
		/**
		 * The busy threads a cap counts now: those its shells show busy plus slots they do not
		 * show yet (placement's room and order, `active_runs`). Synchronous, like `take`.
		 */
		count(cap: Pick<RunCap, "key" | "threads" | "busy">): number {
			if (!cap.busy) {
				const { ids, pending } = holding(cap);
				return ids.size + pending;
			}
			const busy = cap.busy();
			let n = busy.size;
			const mine = held.get(cap.key);
			for (const r of mine ?? []) {
				if (caughtUp(r)) {
					mine?.delete(r);
					changes += 1;
				} else if (r.threadId === undefined || !busy.has(r.threadId)) n++;
			}
			return n;
		},
		/** Changes with every slot taken, given back or shown by a shell since. */
		version: (): number => changes,
		/** How many slots a cap holds that the shells do not show yet (tests, metrics). */
		pending(key: string): number {
			let n = 0;
			for (const r of held.get(key) ?? []) if (!caughtUp(r)) n++;
			return n;
		},
	};
}

export type RunSlots = ReturnType<typeof createRunSlots>;

const ledgers = new WeakMap<Fleet, RunSlots>();

/** The ledger of a fleet that was given none (unit tests build deps by hand). */
export function slotsOf(fleet: Fleet, now: () => number): RunSlots {
	let ledger = ledgers.get(fleet);
	if (!ledger) {
		ledger = createRunSlots(fleetShells(fleet), now);
		ledgers.set(fleet, ledger);
	}
	return ledger;
}
