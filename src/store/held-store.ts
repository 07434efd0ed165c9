/**
 * Held dispatches (CONTRACT.md "One pool", "Holding"): a `t3_dispatch` that could not start yet,
 * kept in the state file until a machine has room. `seq` is the order they start in (oldest
 * first). A row moves `held` → `starting` (machine, launch commandId and threadId recorded in the
 * same transaction as the dispatch, before anything is sent) → `started`; or ends `withdrawn`
 * (t3_interrupt) or `never_started` (it never could). Ended rows stay a while: waits and
 * idempotency keys answer from them. The prompt lives only here (never in memory while held).
 */
import type { Db } from "./db.ts";

export type HeldStatus =
	| "held"
	| "starting"
	| "started"
	| "withdrawn"
	| "never_started";

export interface HeldRow {
	seq: number;
	thread_id: string;
	client: string;
	/** `machine` as given: a pattern, or a machine's name (`named` 1). */
	machine: string;
	named: number;
	/** `project` as given (id, title or path). */
	project: string;
	title: string;
	/** The dispatch's other arguments (JSON; never attachments). */
	args: string;
	origin: string | null;
	/** The idempotency key as the client gave it, or null. */
	key: string | null;
	since: number;
	not_before: number | null;
	status: HeldStatus;
	/** Once starting: the machine chosen and the launch's commandId. */
	placed_machine: string | null;
	command_id: string | null;
	/** never_started: why. */
	error: string | null;
	ended_at: number | null;
}

/** What the drain keeps of a held row in memory (no prompt). */
export type HeldHead = Omit<HeldRow, "args">;

export const HELD_TABLE_SQL = `CREATE TABLE IF NOT EXISTS held (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	thread_id TEXT NOT NULL UNIQUE,
	client TEXT NOT NULL,
	machine TEXT NOT NULL,
	named INTEGER NOT NULL,
	project TEXT NOT NULL,
	title TEXT NOT NULL,
	args TEXT NOT NULL,
	origin TEXT,
	key TEXT,
	since INTEGER NOT NULL,
	not_before INTEGER,
	status TEXT NOT NULL,
	placed_machine TEXT,
	command_id TEXT,
	error TEXT,
	ended_at INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS held_open ON held(status, seq);`;

const HEAD =
	"seq, thread_id, client, machine, named, project, title, origin, key, since, not_before, status, placed_machine, command_id, error, ended_at";

export function createHeldStore(db: Db) {
	const insert = db.query<
		{ seq: number },
		Record<string, string | number | null>
	>(
		`INSERT INTO held (thread_id, client, machine, named, project, title, args, origin, key, since, not_before, status)
		 VALUES ($thread_id, $client, $machine, $named, $project, $title, $args, $origin, $key, $since, $not_before, 'held')
		 RETURNING seq`,
	);
	const open = db.query<HeldHead, []>(
		`SELECT ${HEAD} FROM held WHERE status IN ('held', 'starting') ORDER BY seq`,
	);
	const get = db.query<HeldHead, { id: string }>(
		`SELECT ${HEAD} FROM held WHERE thread_id = $id`,
	);
	const ids = db.query<{ thread_id: string }, []>("SELECT thread_id FROM held");
	const args = db.query<{ args: string }, { id: string }>(
		"SELECT args FROM held WHERE thread_id = $id",
	);
	const starting = db.query(
		"UPDATE held SET status = 'starting', placed_machine = $machine, command_id = $command WHERE thread_id = $id AND status = 'held'",
	);
	const unstart = db.query(
		"UPDATE held SET status = 'held', placed_machine = NULL, command_id = NULL WHERE thread_id = $id AND status = 'starting'",
	);
	const end = db.query(
		"UPDATE held SET status = $status, error = $error, ended_at = $at, args = '{}' WHERE thread_id = $id AND status = $from",
	);
	const remove = db.query("DELETE FROM held WHERE thread_id = $id");
	const prune = db.query(
		"DELETE FROM held WHERE status IN ('started', 'withdrawn', 'never_started') AND ended_at < $before",
	);
	return {
		/** Holds a dispatch; returns its `seq`. */
		insert(
			row: Omit<
				HeldRow,
				| "seq"
				| "status"
				| "placed_machine"
				| "command_id"
				| "error"
				| "ended_at"
			>,
		): number {
			const inserted = insert.get(
				row as unknown as Record<string, string | number | null>,
			);
			return (inserted as { seq: number }).seq;
		},
		/** Rows still held or starting, oldest first. */
		open: (): HeldHead[] => open.all(),
		get: (threadId: string): HeldHead | undefined =>
			get.get({ id: threadId }) ?? undefined,
		/** Every thread id the table holds (open and ended rows). */
		ids: (): string[] => ids.all().map((r) => r.thread_id),
		args: (threadId: string): string | undefined =>
			args.get({ id: threadId })?.args,
		/** held → starting; false when it was no longer held (withdrawn first). */
		starting: (threadId: string, machine: string, commandId: string): boolean =>
			starting.run({ id: threadId, machine, command: commandId }).changes === 1,
		/** starting → held again (its launch was not recorded after all). */
		unstart: (threadId: string) => {
			unstart.run({ id: threadId });
		},
		/** Ends a row (from `from`); false when it was no longer in that status. */
		end: (
			threadId: string,
			from: HeldStatus,
			status: "started" | "withdrawn" | "never_started",
			at: number,
			error: string | null = null,
		): boolean =>
			end.run({ id: threadId, from, status, error, at }).changes === 1,
		remove: (threadId: string) => {
			remove.run({ id: threadId });
		},
		/** Forgets ended rows older than `before`; returns how many. */
		prune: (before: number): number => prune.run({ before }).changes,
	};
}

export type HeldStore = ReturnType<typeof createHeldStore>;
