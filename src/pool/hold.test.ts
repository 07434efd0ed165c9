/**
 * Holding and the drain (CONTRACT.md "One pool", "Holding") on an in-memory state file and fake
 * machines: max_held per client and server, positions over overlapping candidates, the rows
 * surviving a new process in order, withdrawals, and the drain's order (oldest first among those
 * a machine with room can take, none behind one that needs another machine), not_before timers
 * on a manual clock, and a client at its own cap not holding up the others.
 */
import { describe, expect, it } from "bun:test";
import { fakeMachineConfig } from "../../test/helpers/fake-machine.ts";
import type { ClientConfig } from "../config/types.ts";
import { createFleet } from "../fleet/fleet.ts";
import type { RightsError } from "../rights/refusal.ts";
import { openDb } from "../store/db.ts";
import { createHeldStore, type HeldHead } from "../store/held-store.ts";
import type { Machine, ShellChange } from "../t3/machine-api.ts";
import { createManualClock } from "../util/clock.ts";
import { silentLogger } from "../util/log.ts";
import { candidateMachines, createDrain, type StartTry } from "./drain.ts";
import { createHolding, type NewHeld } from "./hold.ts";

const NOW = Date.UTC(2026, 11, 5, 12);

const client = (
	name: string,
	over: Partial<ClientConfig> = {},
): ClientConfig => ({
	name,
	tokenEnv: null,
	tokenFile: null,
	token: undefined,
	access: "auto",
	machines: ["*"],
	projects: ["*"],
	approve: false,
	maxActiveRuns: null,
	...over,
});

function setup(names = ["x", "y"], clients = [client("a"), client("b")]) {
	const listeners = new Set<(c: ShellChange) => void>();
	const fleet = createFleet(
		names.map((name) => fakeMachineConfig(name)),
		(c) =>
			({
				name: c.name,
				onChange(l: (c: ShellChange) => void) {
					listeners.add(l);
					return () => listeners.delete(l);
				},
			}) as unknown as Machine,
	);
	const db = openDb(":memory:");
	const store = createHeldStore(db);
	const clock = createManualClock(NOW);
	const limits = { server: 1000, perClient: 100 };
	const named = (n: string) => clients.find((c) => c.name === n);
	const make = () =>
		createHolding({
			db,
			store,
			now: () => clock.now(),
			candidates: candidateMachines(fleet, named),
			maxHeld: () => ({
				server: limits.server,
				client: (n) => named(n)?.maxHeld ?? limits.perClient,
			}),
		});
	const holding = make();
	let n = 0;
	const hold = (
		machine: string,
		who = "a",
		notBefore: number | null = null,
	) => {
		const row: NewHeld = {
			thread_id: `t${++n}`,
			client: who,
			machine,
			named: /[*?[]/.test(machine) ? 0 : 1,
			project: "demo",
			title: `t${n}`,
			args: JSON.stringify({ prompt: "p" }),
			origin: null,
			key: null,
			since: clock.now(),
			not_before: notBefore,
		};
		return holding.hold(row, "machine_cap", "full");
	};
	return { fleet, db, store, clock, holding, hold, limits, make };
}

describe("holding", () => {
	it("refuses past a client's max_held and the server's, counting held rows only", () => {
		const { hold, limits, holding } = setup(
			["x"],
			[client("a", { maxHeld: 2 }), client("b")],
		);
		limits.server = 3;
		hold("*", "a");
		hold("*", "a");
		const own = (() => {
			try {
				hold("*", "a");
			} catch (error) {
				return error as RightsError;
			}
		})();
		expect(own?.code).toBe("max_held_reached");
		expect(own?.message).toContain("max_held");
		hold("*", "b");
		expect(() => hold("*", "b")).toThrow("[server] max_held");
		expect(holding.count()).toBe(3);
		expect(holding.count("a")).toBe(2);
		holding.withdraw("t1");
		expect(holding.count("a")).toBe(1);
		hold("*", "a");
	});

	it("positions count earlier rows that could take a machine this one can take", () => {
		const { hold, holding } = setup(["x", "y"]);
		const onX = hold("x");
		const any = hold("*");
		const onY = hold("y");
		const last = hold("*");
		expect([onX, any, onY, last].map((h) => holding.shape(h).position)).toEqual(
			[1, 2, 2, 4],
		);
		holding.withdraw(any.thread_id);
		expect(holding.shape(onY).position).toBe(1);
		expect(holding.shape(last).position).toBe(3);
	});

	it("the rows survive a new process, in order, starting ones included", () => {
		const { hold, holding, make } = setup();
		hold("*");
		const second = hold("x");
		hold("y");
		expect(holding.markStarting(second.thread_id, "x", "cmd-1")).toBe(true);
		const again = make();
		expect([...again.open()].map((h) => [h.thread_id, h.status])).toEqual([
			["t1", "held"],
			["t2", "starting"],
			["t3", "held"],
		]);
		expect(again.get("t2")?.command_id).toBe("cmd-1");
		expect(again.count()).toBe(2);
	});

	it("a withdrawn row cannot be marked starting; a starting one is not withdrawn", () => {
		const { hold, holding } = setup();
		const a = hold("*");
		const b = hold("*");
		const ends: string[] = [];
		holding.onEnd((id, end) => ends.push(`${id}:${end}`));
		expect(holding.withdraw(a.thread_id)).toBe("withdrawn");
		expect(holding.markStarting(a.thread_id, "x", "c")).toBe(false);
		expect(holding.markStarting(b.thread_id, "x", "c")).toBe(true);
		expect(holding.withdraw(b.thread_id)).toBe("starting");
		holding.markStarted(b.thread_id, {
			machine: "x",
			project: { id: "p", title: "demo", path: "/p" },
			runId: "r",
			placement: null,
		});
		expect(ends).toEqual(["t1:withdrawn", "t2:started"]);
		expect(holding.get(b.thread_id)?.status).toBe("started");
	});
});

describe("the drain", () => {
	/** A drain over the setup's rows and machines that starts a row with `tryStart`. */
	const drainWith = (
		s: ReturnType<typeof setup>,
		tryStart: (head: HeldHead) => StartTry,
	) =>
		createDrain({
			holding: s.holding,
			fleet: s.fleet,
			clock: s.clock,
			log: silentLogger,
			clientOfThread: () => null,
			tryStart,
			replay: () => null,
		});

	/** A drain whose starts succeed on the machines listed in `room` (one slot each). */
	function drainOf(s: ReturnType<typeof setup>, room: Set<string>) {
		const started: string[] = [];
		const drain = drainWith(s, (head) => {
			const candidates = s.holding.candidatesOf(head);
			const free = candidates.find((m) => room.has(m));
			if (!free)
				return {
					started: false,
					skipped: candidates.map((m) => ({
						machine: m,
						reason: "machine_cap" as const,
						detail: "full",
					})),
				};
			room.delete(free);
			started.push(`${head.thread_id}@${free}`);
			s.holding.markStarting(head.thread_id, free, `c-${head.thread_id}`);
			return {
				started: true,
				done: Promise.resolve().then(() =>
					s.holding.markStarted(head.thread_id, {
						machine: free,
						project: { id: "p", title: "demo", path: "/p" },
						runId: null,
						placement: null,
					}),
				),
			};
		});
		return { drain, started };
	}
	const settle = () => new Promise((r) => setTimeout(r, 0));

	it("oldest first among those a machine with room can take; none waits behind another machine's", async () => {
		const s = setup();
		s.hold("x");
		s.hold("*");
		s.hold("y");
		s.hold("*");
		const room = new Set(["y"]);
		const { drain, started } = drainOf(s, room);
		drain.start();
		await settle();
		expect(started).toEqual(["t2@y"]);
		room.add("x");
		drain.trigger("x");
		await settle();
		expect(started).toEqual(["t2@y", "t1@x"]);
		room.add("y");
		room.add("x");
		drain.trigger("all");
		await settle();
		expect(started).toEqual(["t2@y", "t1@x", "t3@y", "t4@x"]);
		drain.stop();
	});

	it("not_before: held until its time on the clock, then started", async () => {
		const s = setup(["x"]);
		s.hold("*", "a", NOW + 60_000);
		const { drain, started } = drainOf(s, new Set(["x"]));
		drain.start();
		await settle();
		expect(started).toEqual([]);
		expect(s.holding.shape(s.holding.get("t1") as HeldHead).reason).toBe(
			"not_before",
		);
		s.clock.advance(60_000);
		await settle();
		expect(started).toEqual(["t1@x"]);
		drain.stop();
	});

	it("a row whose client reaches no machine now is tried (and can end never_started)", async () => {
		const clients = [client("a"), client("gone")];
		const s = setup(["x"], clients);
		s.hold("*", "gone");
		s.hold("*", "a");
		clients.pop();
		const never: string[] = [];
		const drain = drainWith(s, (head) => {
			if (s.holding.candidatesOf(head).length > 0)
				return { started: false, skipped: [] };
			never.push(head.thread_id);
			return { never: "gone" };
		});
		drain.start();
		await settle();
		expect(never).toEqual(["t1"]);
		expect(s.holding.get("t1")?.status).toBe("never_started");
		drain.stop();
	});

	it("a row whose launch is on its way (not yet recorded) is not tried again", async () => {
		const s = setup(["x", "y"]);
		s.hold("*");
		let tries = 0;
		let finish = () => {};
		const drain = drainWith(s, () => {
			tries += 1;
			return {
				started: true,
				done: new Promise<void>((resolve) => {
					finish = resolve;
				}),
			};
		});
		drain.start();
		await settle();
		drain.trigger("all");
		await settle();
		drain.trigger("y");
		await settle();
		expect(tries).toBe(1);
		finish();
		drain.stop();
	});
});
