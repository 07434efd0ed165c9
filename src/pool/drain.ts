/**
 * Starting held dispatches (CONTRACT.md "One pool", "Holding"): oldest first among those a
 * machine with room can take, none waiting behind one that needs another machine. Driven by the
 * machines' own changes (a run ending, a machine coming online or synchronizing, usage updates)
 * and by `not_before` timers, never by polling the machines; a slow tick catches what time alone
 * frees (a usage window's reset, a send the shell never showed). A row recorded as starting
 * before a restart is replayed first, to its machine only (`replay`), before anything is placed.
 * How a row is placed and launched is handed in (`tryStart`): the pool never imports threads/.
 */
import { fnmatchToRegExp } from "../config/fnmatch.ts";
import type { ClientConfig } from "../config/types.ts";
import type { Fleet } from "../fleet/fleet.ts";
import { isBusyShell } from "../rights/run-slots.ts";
import { machineInReach } from "../rights/scoped-fleet.ts";
import type { HeldHead } from "../store/held-store.ts";
import type { Clock } from "../util/clock.ts";
import type { Logger } from "../util/log.ts";
import type { Holding } from "./hold.ts";
import type { Skipped, SkipReason } from "./placement.ts";

/** What one try to start a held row came to (its slot is taken synchronously when started). */
export type StartTry =
	| { started: true; done: Promise<unknown> }
	| { started: false; skipped: Skipped[] }
	| { never: string };

export interface DrainDeps {
	holding: Holding;
	fleet: Fleet;
	clock: Clock;
	log: Logger;
	/** The client a tracked thread belongs to (a run of its ending frees its cap). */
	clientOfThread(threadId: string): string | null;
	/**
	 * A cheap first look at a machine: online and below its cap (what placement looks at first,
	 * without the project, provider and usage); a row none of whose machines passes is skipped
	 * without placing it. Absent: every row is placed.
	 */
	hasRoom?(machine: string): boolean;
	/** Places the row and takes its slot now, or says why not; the launch goes on by itself. */
	tryStart(head: HeldHead): StartTry;
	/**
	 * A row recorded as starting whose launch is not on its way (a restart, a send that failed):
	 * sends its recorded launch again, to its machine only, when that is online (its slot taken
	 * now); null while it is not.
	 */
	replay(head: HeldHead): Promise<unknown> | null;
}

/** How often the drain looks again while rows are held, with no change seen. */
export const DRAIN_TICK_MS = 10_000;
/** A replay that failed (its machine refused or dropped it) waits this long before the next. */
const REPLAY_BACKOFF_MS = 5_000;

/** Reasons that hold for every row on that machine (any client, any model). */
const MACHINE_WIDE = new Set<SkipReason>(["machine_cap", "offline"]);

export function createDrain(deps: DrainDeps) {
	const { holding, fleet, clock } = deps;
	let machines: Set<string> | "all" | null = null;
	let clients = new Set<string>();
	let queued = false;
	let running = false;
	let stopped = false;
	/** Rows whose launch is on its way (first try or replay). */
	const inFlight = new Set<string>();
	/** A replay that failed is tried again no sooner than this (epoch ms). */
	const retryAt = new Map<string, number>();
	let cancelTimer = () => {};
	let timerAt = Number.POSITIVE_INFINITY;
	const unsubscribes: (() => void)[] = [];

	function trigger(machine: string | "all", client?: string | null): void {
		if (stopped) return;
		if (machine === "all") machines = "all";
		else if (machines !== "all") {
			machines ??= new Set();
			machines.add(machine);
		}
		if (client) clients.add(client);
		if (queued) return;
		queued = true;
		// After every listener of the change ran (the busy sets are current then).
		queueMicrotask(pass);
	}

	function pass(): void {
		queued = false;
		if (stopped) return;
		if (running) {
			trigger("all");
			return;
		}
		const only = machines;
		const forClients = clients;
		machines = null;
		clients = new Set();
		running = true;
		try {
			walk(only === "all" ? null : only, forClients);
		} catch (error) {
			deps.log.warn("drain: a pass failed", { error });
		} finally {
			running = false;
		}
	}

	function walk(only: Set<string> | null, forClients: Set<string>): void {
		const now = clock.now();
		let next = Number.POSITIVE_INFINITY;
		// Rows recorded as starting first (a restart): their slots before any placement.
		for (const head of holding.starting()) {
			const id = head.thread_id;
			if (head.status !== "starting" || inFlight.has(id)) continue;
			const after = retryAt.get(id) ?? 0;
			if (after > now) {
				next = Math.min(next, after);
				continue;
			}
			const done = deps.replay(head);
			if (done) follow(id, done);
		}
		const blocked = new Set<string>();
		/** Clients at their own cap: none of their rows can start in this pass. */
		const capped = new Set<string>();
		const all = fleet.names();
		// Done when every machine the pass is about has no room for anyone (a client's trigger is
		// about every machine: its cap freed).
		const done = () =>
			(forClients.size === 0 && only ? [...only] : all).every((m) =>
				blocked.has(m),
			);
		// Live iteration: a row ended meanwhile is skipped, one held meanwhile is looked at too.
		for (const head of holding.open()) {
			// One on its way (placed, not yet recorded as starting) is not tried twice.
			if (head.status !== "held" || inFlight.has(head.thread_id)) continue;
			if (head.not_before !== null && head.not_before > now) {
				next = Math.min(next, head.not_before);
				continue;
			}
			const candidates = holding.candidatesOf(head);
			if (
				only &&
				candidates.length > 0 &&
				!forClients.has(head.client) &&
				!candidates.some((m) => only.has(m))
			)
				continue;
			if (capped.has(head.client)) continue;
			if (candidates.length > 0 && candidates.every((m) => blocked.has(m)))
				continue;
			if (deps.hasRoom && candidates.length > 0) {
				let some = false;
				for (const m of candidates) {
					if (blocked.has(m)) continue;
					if (deps.hasRoom(m)) some = true;
					else blocked.add(m);
				}
				if (!some) {
					if (done()) break;
					continue;
				}
			}
			const tried = deps.tryStart(head);
			if ("done" in tried) follow(head.thread_id, tried.done);
			else if ("never" in tried)
				holding.markNeverStarted(head.thread_id, tried.never);
			else if (!tried.started) {
				const first =
					tried.skipped.find((s) => s.reason === "machine_cap") ??
					tried.skipped[0];
				if (first)
					holding.note(
						head.thread_id,
						first.reason,
						tried.skipped
							.map((s) => `${s.machine}: ${s.reason} (${s.detail})`)
							.join("; ")
							.slice(0, 1_000),
					);
				for (const s of tried.skipped)
					if (MACHINE_WIDE.has(s.reason)) blocked.add(s.machine);
				// Its client at its own cap: every machine that had room refused it for that.
				if (
					tried.skipped.some((s) => s.reason === "client_cap") &&
					tried.skipped.every(
						(s) => s.reason === "client_cap" || blocked.has(s.machine),
					)
				)
					capped.add(head.client);
				if (done()) break;
			}
		}
		arm(next);
	}

	/**
	 * Keeps the row off the walk while its launch is on its way; looks again when it ends. A
	 * launch that failed in a way worth another try (rejected) waits a moment first.
	 */
	function follow(id: string, done: Promise<unknown>): void {
		inFlight.add(id);
		const end = (failed: boolean) => {
			inFlight.delete(id);
			if (failed) retryAt.set(id, clock.now() + REPLAY_BACKOFF_MS);
			else retryAt.delete(id);
			trigger("all");
		};
		done.then(
			() => end(false),
			(error: unknown) => {
				deps.log.debug("drain: a start failed", { threadId: id, error });
				end(true);
			},
		);
	}

	/** The next look: the earliest `not_before` ahead, else the slow tick while rows are held. */
	function arm(next: number): void {
		const now = clock.now();
		const at = holding.count() > 0 ? Math.min(next, now + DRAIN_TICK_MS) : next;
		if (at === timerAt) return;
		cancelTimer();
		timerAt = at;
		if (!Number.isFinite(at)) return;
		cancelTimer = clock.setTimer(
			() => {
				timerAt = Number.POSITIVE_INFINITY;
				trigger("all");
			},
			Math.max(0, at - now),
		);
	}

	return {
		trigger,
		/** Launches on their way now (tests, shutdown). */
		inFlight: (): number => inFlight.size,
		start(): void {
			unsubscribes.push(
				fleet.forEachMachine((entry) =>
					entry.machine.onChange((change) => {
						// Nothing held: no change can start anything (a start-up's thousands of them).
						if (holding.openCount() === 0 && inFlight.size === 0) return;
						const name = entry.config.name;
						if (change.kind === "thread") {
							const was = change.previous;
							if (isBusyShell(change.thread) || (was && !isBusyShell(was)))
								return;
							trigger(name, deps.clientOfThread(change.thread.id));
						} else if (change.kind === "removed") trigger("all");
						else trigger(name);
					}),
				),
			);
			trigger("all");
		},
		stop(): void {
			stopped = true;
			cancelTimer();
			for (const u of unsubscribes.splice(0)) u();
		},
	};
}

export type Drain = ReturnType<typeof createDrain>;

/**
 * The machines a held row could take: its pattern (or name) among the fleet's machines within
 * its client's reach now (`clientNamed`: the client as configured now, undefined when gone).
 * Kept per client object and pattern until the fleet's machines change.
 */
export function candidateMachines(
	fleet: Fleet,
	clientNamed: (name: string) => ClientConfig | undefined,
): (head: Pick<HeldHead, "client" | "machine">) => readonly string[] {
	let list = fleet.list();
	let kept = new WeakMap<ClientConfig, Map<string, readonly string[]>>();
	const none: readonly string[] = [];
	return (head) => {
		const client = clientNamed(head.client);
		if (!client) return none;
		if (fleet.list() !== list) {
			list = fleet.list();
			kept = new WeakMap();
		}
		let byPattern = kept.get(client);
		if (!byPattern) {
			byPattern = new Map();
			kept.set(client, byPattern);
		}
		let names = byPattern.get(head.machine);
		if (!names) {
			const match = fnmatchToRegExp(head.machine);
			names = list
				.map((e) => e.config.name)
				.filter((n) => match.test(n) && machineInReach(client, n));
			byPattern.set(head.machine, names);
		}
		return names;
	};
}
