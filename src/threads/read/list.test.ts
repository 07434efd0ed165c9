import { describe, expect, test } from "bun:test";
import { openDb } from "../../store/db.ts";
import { createShellMirror } from "../../t3/follow/shell-mirror.ts";
import type { ShellChange } from "../../t3/machine-api.ts";
import type { ProjectShell, ThreadShell } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { listThreads } from "./list.ts";
import { threadState } from "./thread-state.ts";

const shell = (patch: Partial<ThreadShell>): ThreadShell => ({
	id: "t",
	projectId: "p",
	title: "a thread",
	latestRunId: null,
	activeRunId: null,
	status: "idle",
	pendingRuntimeRequest: null,
	latestVisibleMessage: null,
	updatedAt: "2026-12-01T00:00:00.000Z",
	...patch,
});

describe("threadState", () => {
	test("exactly one state, attention before active before settled", () => {
		const pending = { id: "r", kind: "user_input" };
		expect(
			threadState(
				shell({
					status: "running",
					activeRunId: "run",
					pendingRuntimeRequest: pending,
				}),
			),
		).toBe("attention");
		expect(
			threadState(
				shell({ pendingRuntimeRequest: { id: "r", kind: "command" } }),
			),
		).toBe("attention");
		expect(threadState(shell({ status: "failed" }))).toBe("attention");
		expect(threadState(shell({ status: "queued" }))).toBe("active");
		expect(threadState(shell({ status: "waiting" }))).toBe("active");
		expect(threadState(shell({ status: "interrupted" }))).toBe("settled");
		expect(threadState(shell({ status: "idle" }))).toBe("settled");
	});
});

/** Two online machines holding `threads` each, with one allowed project "p" and a hidden "h". */
function fakeDeps(
	threads: Record<string, ThreadShell[]>,
	archived: Record<string, ThreadShell[] | Error> = {},
) {
	// Every listener of a machine, as a machine's own onChange keeps them.
	const listeners = new Map<string, Set<(c: ShellChange) => void>>();
	const tell = (machine: string, change: ShellChange) => {
		for (const listener of listeners.get(machine) ?? []) listener(change);
	};
	const entries = Object.entries(threads).map(([name, list]) => {
		const held = new Map(list.map((t) => [t.id, t]));
		// Projects as a machine holds them: in its shell mirror (a project change is no event).
		const mirror = createShellMirror(() => {});
		mirror.applySnapshot({
			snapshotSequence: 1,
			projects: [
				{ id: "p", title: "demo", workspaceRoot: "/srv/demo" },
				{ id: "h", title: "hidden", workspaceRoot: "/srv/hidden" },
			] as ProjectShell[],
			threads: [],
		});
		const status = { state: "online", reason: null as string | null };
		const current = {
			config: { name },
			allows: (p: { title: string }) => p.title !== "hidden",
			held,
			mirror,
			status,
			machine: {
				status: () => current.status,
				projects: () => mirror.projects(),
				threads: () => [...held.values()],
				thread: (id: string) => held.get(id),
				async archivedThreads() {
					const a = archived[name] ?? [];
					if (a instanceof Error) throw a;
					return a;
				},
				onChange(listener: (c: ShellChange) => void) {
					const own = listeners.get(name) ?? new Set();
					own.add(listener);
					listeners.set(name, own);
					return () => own.delete(listener);
				},
			},
		};
		return current;
	});
	const fleet = {
		list: () => entries,
		get: (name: string) => entries.find((e) => e.config.name === name),
		names: () => entries.map((e) => e.config.name),
		projects: (e: (typeof entries)[number]) =>
			e.machine.projects().filter((p) => e.allows(p)),
	};
	const deps = {
		fleet,
		db: openDb(":memory:"),
		threads: {
			get: () => undefined,
			getMany: () => new Map(),
			missingOn: () => [],
			machinesWithMissing: () => new Set(),
		},
	} as unknown as ThreadDeps;
	/** Replaces a thread on a machine and tells the listing, as a shell update would. */
	const update = (machine: string, thread: ThreadShell) => {
		entries.find((e) => e.config.name === machine)?.held.set(thread.id, thread);
		tell(machine, { kind: "thread", thread, sequence: 1, previous: undefined });
	};
	/** Removes a thread from a machine and tells the listing. */
	const remove = (machine: string, threadId: string) => {
		entries.find((e) => e.config.name === machine)?.held.delete(threadId);
		tell(machine, {
			kind: "thread.removed",
			threadId,
			sequence: 1,
			previous: undefined,
		});
	};
	/** Replaces a machine's whole shell, as a snapshot after a reconnect does. */
	const snapshot = (machine: string, threads: ThreadShell[]) => {
		const entry = entries.find((e) => e.config.name === machine);
		entry?.held.clear();
		for (const t of threads) entry?.held.set(t.id, t);
		tell(machine, { kind: "snapshot", sequence: 1 });
	};
	const entry = (machine: string) =>
		entries.find((e) => e.config.name === machine) as (typeof entries)[number];
	/** The machine's connection state changes (a state event, as a machine's link sends it). */
	const setState = (machine: string, state: string) => {
		const own = entry(machine);
		own.status = { state, reason: state === "online" ? null : "test" };
		tell(machine, {
			kind: "state",
			status: own.status,
		} as unknown as ShellChange);
	};
	/** A project renamed in the machine's shell (T3's `project.updated`): no change event. */
	const renameProject = (machine: string, id: string, title: string) => {
		const { mirror } = entry(machine);
		mirror.apply({
			kind: "project.updated",
			sequence: mirror.sequence() + 1,
			project: {
				id,
				title,
				workspaceRoot: `/srv/${id}`,
			} as ProjectShell,
		});
	};
	return { deps, update, remove, snapshot, setState, renameProject };
}

const at = (minute: number) =>
	`2026-12-01T00:${String(minute).padStart(2, "0")}:00.000Z`;

/** Mostly T3's own form; now and then a time that sorts as text differently from its instant. */
function oddly(time: string, r: number): string {
	if (r < 0.8) return time;
	if (r < 0.87) return time.replace(".000Z", "Z");
	if (r < 0.94) return time.replace(".000Z", ".5+00:00");
	return "";
}

describe("listThreads", () => {
	const threads = {
		a: [
			shell({ id: "a1", updatedAt: at(1) }),
			shell({ id: "a2", updatedAt: at(3) }),
			shell({ id: "a3", updatedAt: at(3) }),
			shell({ id: "ah", projectId: "h", updatedAt: at(9) }),
		],
		b: [
			shell({ id: "b1", updatedAt: at(2), title: "Fix the Parser" }),
			shell({ id: "b2", updatedAt: at(3) }),
		],
	};

	test("pages newest first across machines (ties by id), hidden projects left out", async () => {
		const { deps } = fakeDeps(threads);
		const ids: string[] = [];
		let cursor: string | undefined;
		for (;;) {
			const page = await listThreads(deps, { limit: 2, cursor });
			ids.push(...page.threads.map((t) => t.thread_id));
			if (!page.next_cursor) break;
			cursor = page.next_cursor;
		}
		expect(ids).toEqual(["a2", "a3", "b2", "b1", "a1"]);
	});

	test("an update moves a thread to the top; a search matches case-insensitively", async () => {
		const { deps, update } = fakeDeps(threads);
		expect((await listThreads(deps, {})).threads[0]?.thread_id).toBe("a2");
		update("b", shell({ id: "b1", updatedAt: at(7), title: "Fix the Parser" }));
		const after = await listThreads(deps, {});
		expect(after.threads.map((t) => t.thread_id)).toEqual([
			"b1",
			"a2",
			"a3",
			"b2",
			"a1",
		]);
		const found = await listThreads(deps, { query: "PARSER" });
		expect(found.threads.map((t) => t.thread_id)).toEqual(["b1"]);
	});

	test("a repeated listing sees a machine going offline, coming back and a project hidden", async () => {
		const { deps, setState, renameProject } = fakeDeps(threads);
		const ids = async () => {
			const page = await listThreads(deps, {});
			return {
				ids: page.threads.map((t) => t.thread_id),
				unavailable: page.unavailable.map((u) => u.machine),
			};
		};
		expect(await ids()).toEqual({
			ids: ["a2", "a3", "b2", "b1", "a1"],
			unavailable: [],
		});
		setState("a", "offline");
		expect(await ids()).toEqual({ ids: ["b2", "b1"], unavailable: ["a"] });
		setState("a", "online");
		expect((await ids()).ids).toEqual(["a2", "a3", "b2", "b1", "a1"]);
		// Only the shell's project list tells: no change event comes with it.
		renameProject("b", "p", "hidden");
		expect(await ids()).toEqual({ ids: ["a2", "a3", "a1"], unavailable: [] });
	});

	test("a cursor works only with the filters it was made for", async () => {
		const { deps } = fakeDeps(threads);
		const page = await listThreads(deps, { limit: 1 });
		const cursor = page.next_cursor as string;
		await expect(
			listThreads(deps, { limit: 1, query: "xx", cursor }),
		).rejects.toThrow(
			"cursor is not valid; call again without cursor (it was made for other filters",
		);
		// limit is not a filter: a bigger page from the same position is fine.
		const rest = await listThreads(deps, { limit: 10, cursor });
		expect(rest.threads.map((t) => t.thread_id)).toEqual([
			"a3",
			"b2",
			"b1",
			"a1",
		]);
		await expect(listThreads(deps, { cursor: "e30" })).rejects.toThrow(
			"cursor is not valid; call again without cursor.",
		);
	});

	test("archived threads come from each machine; one that cannot be read is listed as unavailable", async () => {
		const { deps } = fakeDeps(threads, {
			a: [
				shell({ id: "old", archivedAt: at(5), updatedAt: at(5) }),
				// A hidden project's archived thread stays hidden, even the newest.
				shell({
					id: "oldh",
					projectId: "h",
					archivedAt: at(9),
					updatedAt: at(9),
				}),
			],
			b: new Error("getArchivedShellSnapshot failed on the server"),
		});
		const result = await listThreads(deps, { archived: true });
		expect(result.threads.map((t) => [t.thread_id, t.archived])).toEqual([
			["old", true],
		]);
		expect(result.unavailable).toEqual([
			{
				machine: "b",
				state: "online",
				reason:
					"its archived threads could not be read: getArchivedShellSnapshot failed on the server",
			},
		]);
	});
});

describe("listThreads against a plain filter-and-sort", () => {
	/** A small deterministic generator (mulberry32), so a failure repeats. */
	function random(seed: number) {
		let a = seed;
		return () => {
			a = (a + 0x6d2b79f5) | 0;
			let t = Math.imul(a ^ (a >>> 15), 1 | a);
			t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
			return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
		};
	}
	const words = ["Parser", "fix", "ΣΊΣΥΦΟΣ", "lexer", "\u0000", "a\nb", "bug"];
	const statuses = ["idle", "running", "failed", "queued", "completed"];
	const states = ["all", "attention", "active", "settled"] as const;
	const queries = [
		undefined,
		"parser",
		"σσ",
		"\u0000\u0001",
		// Holding the separator: matched against each thread's text on its own.
		"x\n\u0000",
		"!\u0000",
		"a\nb",
		"!!",
		"zz",
	];

	function generator(seed: number) {
		const next = random(seed);
		const pick = <T>(xs: readonly T[]) =>
			xs[Math.floor(next() * xs.length)] as T;
		const thread = (id: string) =>
			shell({
				id,
				projectId: next() < 0.2 ? "h" : "p",
				title: `${pick(words)} ${pick(words)}`,
				latestVisibleMessage:
					next() < 0.5 ? { text: `${pick(words)}!`, role: "assistant" } : null,
				status: pick(statuses),
				pendingRuntimeRequest:
					next() < 0.1 ? { id: "r", kind: "user_input" } : null,
				deletedAt: next() < 0.05 ? at(0) : null,
				// Few distinct times: many ties, ordered by id. Some not in T3's fixed-width
				// form (no milliseconds, an offset, none): ordered as texts all the same.
				updatedAt: oddly(at(Math.floor(next() * 20)), next()),
			} as Partial<ThreadShell>);
		return { next, pick, thread };
	}

	function expectedIds(
		all: ThreadShell[],
		state: (typeof states)[number],
		query: string | undefined,
	): string[] {
		return all
			.filter(
				(t) =>
					t.projectId === "p" &&
					!t.deletedAt &&
					(state === "all" || threadState(t) === state) &&
					(query === undefined ||
						`${t.title}\n${t.latestVisibleMessage?.text ?? ""}`
							.toLowerCase()
							.includes(query)),
			)
			.sort((x, y) =>
				x.updatedAt === y.updatedAt
					? x.id < y.id
						? -1
						: 1
					: (x.updatedAt ?? "") < (y.updatedAt ?? "")
						? 1
						: -1,
			)
			.map((t) => t.id);
	}

	/** Every page in turn, with page sizes from `next`. */
	async function pageThrough(
		deps: ThreadDeps,
		next: () => number,
		state: (typeof states)[number],
		query: string | undefined,
	): Promise<string[]> {
		const seen: string[] = [];
		let cursor: string | undefined;
		for (;;) {
			const limit = 1 + Math.floor(next() * 12);
			const page = await listThreads(deps, { state, query, limit, cursor });
			expect(page.threads.length).toBeLessThanOrEqual(limit);
			seen.push(...page.threads.map((t) => t.thread_id));
			if (!page.next_cursor) break;
			cursor = page.next_cursor;
		}
		return seen;
	}

	test("every filter, page size and cursor gives the same rows in the same order", async () => {
		const { next, pick, thread } = generator(7);
		const threads: Record<string, ThreadShell[]> = { a: [], b: [], c: [] };
		for (let i = 0; i < 150; i++)
			(threads[pick(["a", "b", "c"])] as ThreadShell[]).push(
				thread(`t${String(i).padStart(3, "0")}`),
			);
		const { deps } = fakeDeps(threads);
		const all = Object.values(threads).flat();
		for (const state of states)
			for (const query of queries)
				expect({
					state,
					query,
					ids: await pageThrough(deps, next, state, query),
				}).toEqual({ state, query, ids: expectedIds(all, state, query) });
	});

	test("still so after shell changes: updates, new threads, removals and snapshots", async () => {
		const { next, pick, thread } = generator(11);
		const held: Record<string, Map<string, ThreadShell>> = {
			a: new Map(),
			b: new Map(),
			c: new Map(),
		};
		let made = 0;
		const newId = () => `t${String(made++).padStart(4, "0")}`;
		for (let i = 0; i < 90; i++) {
			const t = thread(newId());
			held[pick(["a", "b", "c"])]?.set(t.id, t);
		}
		const { deps, update, remove, snapshot } = fakeDeps(
			Object.fromEntries(
				Object.entries(held).map(([m, map]) => [m, [...map.values()]]),
			),
		);
		for (let round = 0; round < 40; round++) {
			// From one change to many (past the point where the whole list is read again).
			const changes = round % 10 === 9 ? 40 : 1 + Math.floor(next() * 4);
			for (let c = 0; c < changes; c++) {
				const machine = pick(["a", "b", "c"]);
				const map = held[machine] as Map<string, ThreadShell>;
				const ids = [...map.keys()];
				const roll = next();
				if (roll < 0.5 && ids.length) {
					const t = thread(pick(ids));
					map.set(t.id, t);
					update(machine, t);
				} else if (roll < 0.75) {
					const t = thread(newId());
					map.set(t.id, t);
					update(machine, t);
				} else if (roll < 0.95 && ids.length) {
					const id = pick(ids);
					map.delete(id);
					remove(machine, id);
				} else {
					map.clear();
					for (let i = 0; i < 20; i++) {
						const t = thread(newId());
						map.set(t.id, t);
					}
					snapshot(machine, [...map.values()]);
				}
			}
			const all = Object.values(held).flatMap((m) => [...m.values()]);
			// A few filters each round, so states and search texts are made and then kept.
			for (const state of [pick(states), "all" as const])
				for (const query of [pick(queries), "!!"])
					expect({
						round,
						state,
						query,
						ids: await pageThrough(deps, next, state, query),
					}).toEqual({
						round,
						state,
						query,
						ids: expectedIds(all, state, query),
					});
		}
	});
});
