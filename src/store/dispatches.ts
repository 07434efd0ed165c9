/**
 * Every dispatch this connector sent: its ids are minted once and stored before the command
 * goes out, so a retry (ours after a lost reply, or the client's with the same idempotency key,
 * see src/store/operations.ts) re-sends the very same command and T3's commandId idempotency
 * makes it run once. (`request_id` is no longer written: keys moved to the operations table.)
 */
import type { Db } from "./db.ts";

export interface DispatchRecord {
	command_id: string;
	thread_id: string;
	machine: string;
	kind: "launch" | "message";
	message_id: string;
	run_id: string | null;
	run_status: string | null;
	queued: number;
	origin: string | null;
	payload: string;
	created_at: number;
}

export function createDispatchStore(db: Db) {
	const insert = db.query(
		`INSERT INTO dispatches (command_id, thread_id, machine, kind, message_id, origin, payload, created_at)
		 VALUES ($command_id, $thread_id, $machine, $kind, $message_id, $origin, $payload, $created_at)`,
	);
	const byCommand = db.query<DispatchRecord, { id: string }>(
		"SELECT * FROM dispatches WHERE command_id = $id",
	);
	const latest = db.query<DispatchRecord, { id: string }>(
		"SELECT * FROM dispatches WHERE thread_id = $id ORDER BY created_at DESC, rowid DESC LIMIT 1",
	);
	const launch = db.query<DispatchRecord, { id: string }>(
		"SELECT * FROM dispatches WHERE thread_id = $id AND kind = 'launch' LIMIT 1",
	);
	const byRun = db.query<DispatchRecord, { id: string }>(
		"SELECT * FROM dispatches WHERE run_id = $id LIMIT 1",
	);
	const byMessage = db.query<DispatchRecord, { id: string }>(
		"SELECT * FROM dispatches WHERE message_id = $id LIMIT 1",
	);
	const setRun = db.query(
		"UPDATE dispatches SET run_id = $runId, run_status = $status, queued = $queued WHERE command_id = $id",
	);
	const remove = db.query("DELETE FROM dispatches WHERE command_id = $id");

	return {
		insert: (d: Omit<DispatchRecord, "run_id" | "run_status" | "queued">) => {
			insert.run(d);
		},
		byCommandId: (id: string): DispatchRecord | undefined =>
			byCommand.get({ id }) ?? undefined,
		latestForThread: (id: string): DispatchRecord | undefined =>
			latest.get({ id }) ?? undefined,
		/** The launch this connector sent for the thread, if it launched it. */
		launchOf: (id: string): DispatchRecord | undefined =>
			launch.get({ id }) ?? undefined,
		byRunId: (id: string): DispatchRecord | undefined =>
			byRun.get({ id }) ?? undefined,
		byMessageId: (id: string): DispatchRecord | undefined =>
			byMessage.get({ id }) ?? undefined,
		setRun: (
			commandId: string,
			runId: string,
			status: string,
			queued: boolean,
		) => {
			setRun.run({ id: commandId, runId, status, queued: queued ? 1 : 0 });
		},
		remove: (commandId: string) => {
			remove.run({ id: commandId });
		},
	};
}

export type DispatchStore = ReturnType<typeof createDispatchStore>;
