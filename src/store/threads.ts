/**
 * Threads this connector dispatched, continued or was asked to watch. Reads apply the
 * visibility rule (CONTRACT.md `projects`): a record whose project the allowlist hides now is
 * not returned, exactly as if it did not exist, so every tool and the event tracker built on
 * these reads leaves it alone. It stays stored: allowed again, it is back as it was.
 */
import { maskSecrets } from "../util/redact.ts";
import type { Db } from "./db.ts";

export interface ThreadRecord {
	thread_id: string;
	machine: string;
	project_id: string;
	title: string;
	origin: string | null;
	watched: number;
	baseline_ordinal: number;
	last_run_id: string | null;
	last_status: string | null;
	last_request_id: string | null;
	thread_seq: number;
	created_at: number;
	updated_at: number;
	/** The project's title and workspace root when last seen (null in rows from before). */
	project_title: string | null;
	project_path: string | null;
	/** The client whose dispatch last ran on it (null: none of ours, or from before clients). */
	client: string | null;
}

export interface ThreadUpsert {
	threadId: string;
	machine: string;
	projectId: string;
	/** The project's title and workspace root now (kept when not given). */
	projectTitle?: string;
	projectPath?: string;
	title: string;
	origin: string | null;
	watched: boolean;
	now: number;
	/** The client whose dispatch this is (kept when not given). */
	client?: string;
}

/** Where a record's thread lives: all that whether it is hidden is judged on. */
export type RecordPlace = Pick<
	ThreadRecord,
	"machine" | "project_id" | "project_title" | "project_path"
>;

/** A watched thread's place and the shell state last evaluated (the catch-up's columns). */
export type WatchedState = Pick<
	ThreadRecord,
	| "thread_id"
	| "machine"
	| "project_id"
	| "project_title"
	| "project_path"
	| "last_run_id"
	| "last_status"
	| "last_request_id"
>;

export function createThreadStore(
	db: Db,
	/** Whether the record's project is allowed now (fleet.allowsRecord); default all. */
	visible: (record: RecordPlace) => boolean = () => true,
) {
	const get = db.query<ThreadRecord, { id: string }>(
		"SELECT * FROM threads WHERE thread_id = $id",
	);
	const upsert = db.query(
		`INSERT INTO threads (thread_id, machine, project_id, project_title, project_path, title, origin, watched, client, created_at, updated_at)
		 VALUES ($threadId, $machine, $projectId, $projectTitle, $projectPath, $title, $origin, $watched, $client, $now, $now)
		 ON CONFLICT (thread_id) DO UPDATE SET
		   machine = excluded.machine, project_id = excluded.project_id, title = excluded.title,
		   project_title = COALESCE(excluded.project_title, project_title),
		   project_path = COALESCE(excluded.project_path, project_path),
		   origin = excluded.origin, watched = excluded.watched,
		   client = COALESCE(excluded.client, client), updated_at = excluded.updated_at`,
	);
	const setWatched = db.query(
		"UPDATE threads SET watched = $watched, origin = $origin, updated_at = $now WHERE thread_id = $id",
	);
	const many = db.query<ThreadRecord, { ids: string }>(
		"SELECT * FROM threads WHERE thread_id IN (SELECT value FROM json_each($ids))",
	);
	const all = db.query<ThreadRecord, []>(
		"SELECT * FROM threads ORDER BY created_at",
	);
	const watchedOn = db.query<ThreadRecord, { machine: string }>(
		"SELECT * FROM threads WHERE machine = $machine AND watched = 1",
	);
	const watchedStatesOn = db.query<WatchedState, { machine: string }>(
		"SELECT thread_id, machine, project_id, project_title, project_path, last_run_id, last_status, last_request_id FROM threads WHERE machine = $machine AND watched = 1",
	);
	const ofClient = db.query<
		{ threadId: string; machine: string; storedStatus: string | null },
		{ client: string }
	>(
		"SELECT thread_id AS threadId, machine, last_status AS storedStatus FROM threads WHERE client = $client",
	);
	const remove = db.query("DELETE FROM threads WHERE thread_id = $id");
	// Vanished threads are unwatched: the (machine, watched) index finds them.
	const markMissing = db.query(
		"UPDATE threads SET watched = 0, last_status = 'missing', updated_at = $now WHERE thread_id = $id",
	);
	const missingMachines = db.query<{ machine: string }, []>(
		"SELECT DISTINCT machine FROM threads WHERE watched = 0 AND last_status = 'missing'",
	);
	const missingOn = db.query<ThreadRecord, { machine: string }>(
		"SELECT * FROM threads WHERE machine = $machine AND watched = 0 AND last_status = 'missing'",
	);
	const unwatchedOn = db.query<ThreadRecord, { machine: string }>(
		"SELECT * FROM threads WHERE machine = $machine AND watched = 0 AND (last_status IS NULL OR last_status != 'missing')",
	);
	const observe = db.query(
		`UPDATE threads SET last_run_id = $runId, last_status = $status, last_request_id = $requestId,
		   title = $title, updated_at = $now WHERE thread_id = $id`,
	);
	const setBaseline = db.query(
		"UPDATE threads SET baseline_ordinal = $ordinal WHERE thread_id = $id",
	);
	const nextSeq = db.query<{ thread_seq: number }, { id: string }>(
		"UPDATE threads SET thread_seq = thread_seq + 1 WHERE thread_id = $id RETURNING thread_seq",
	);

	return {
		/** The record; undefined when unknown or hidden. */
		get: (id: string): ThreadRecord | undefined => {
			const record = get.get({ id });
			return record && visible(record) ? record : undefined;
		},
		/** The records of these ids that exist and are not hidden, by id: one read for a page of rows. */
		getMany: (ids: string[]): Map<string, ThreadRecord> =>
			new Map(
				many
					.all({ ids: JSON.stringify(ids) })
					.filter(perProject(visible))
					.map((r) => [r.thread_id, r]),
			),
		/** Every record not hidden. */
		all: (): ThreadRecord[] => all.all().filter(perProject(visible)),
		/** Ids of the watched threads on one machine not hidden (catch-up after a reconnect). */
		watchedOn: (machine: string): string[] =>
			watchedOn
				.all({ machine })
				.filter(perProject(visible))
				.map((r) => r.thread_id),
		/** The records of the watched threads on one machine not hidden. */
		watchedRecordsOn: (machine: string): ThreadRecord[] =>
			watchedOn.all({ machine }).filter(perProject(visible)),
		/**
		 * What the catch-up compares with each watched thread's shell, for one machine (not
		 * hidden): only the columns it reads, since a fleet's start reads every watched row.
		 */
		watchedStatesOn: (machine: string): WatchedState[] =>
			watchedStatesOn.all({ machine }).filter(perProject(visible)),
		/** The threads a client dispatched on, where they are (for `max_active_runs`). */
		ofClient: (client: string) => ofClient.all({ client }),
		/** A record exists but its project is hidden now (an unknown thread is not hidden). */
		isHidden: (id: string): boolean => {
			const record = get.get({ id });
			return record !== null && !visible(record);
		},
		upsert: (t: ThreadUpsert) => {
			// Titles and paths come from T3: stored only masked (CONTRACT.md "HTTP").
			upsert.run({
				...t,
				title: maskSecrets(t.title),
				projectTitle:
					t.projectTitle === undefined ? null : maskSecrets(t.projectTitle),
				projectPath:
					t.projectPath === undefined ? null : maskSecrets(t.projectPath),
				watched: t.watched ? 1 : 0,
				client: t.client ?? null,
			});
		},
		setWatched: (
			id: string,
			watched: boolean,
			origin: string | null,
			now: number,
		) => {
			setWatched.run({ id, watched: watched ? 1 : 0, origin, now });
		},
		remove: (id: string) => {
			remove.run({ id });
		},
		/**
		 * T3 no longer has the thread (vanish.ts): it is no longer watched, and its status is
		 * "missing" wherever the record is shown (t3_watch, t3_threads), not its last one.
		 */
		markMissing: (id: string, now: number) => {
			markMissing.run({ id, now });
		},
		/**
		 * The machines with records marked missing: one read (an index of only those rows) for a
		 * listing of every machine, instead of one per machine.
		 */
		machinesWithMissing: (): Set<string> =>
			new Set(missingMachines.all().map((r) => r.machine)),
		/** The records on one machine marked missing, not hidden. */
		missingOn: (machine: string): ThreadRecord[] =>
			missingOn.all({ machine }).filter(perProject(visible)),
		/** The records on one machine not watched and not (yet) marked missing, not hidden. */
		unwatchedOn: (machine: string): ThreadRecord[] =>
			unwatchedOn.all({ machine }).filter(perProject(visible)),
		/** Remembers the last shell state seen, so a restart can tell what changed meanwhile. */
		observe: (
			id: string,
			seen: {
				runId: string | null;
				status: string | null;
				requestId: string | null;
				title: string;
			},
			now: number,
		) => {
			observe.run({ id, ...seen, title: maskSecrets(seen.title), now });
		},
		setBaseline: (id: string, ordinal: number) => {
			setBaseline.run({ id, ordinal });
		},
		nextSeq: (id: string): number => nextSeq.get({ id })?.thread_seq ?? 0,
	};
}

export type ThreadStore = ReturnType<typeof createThreadStore>;

/** The rule judged once per project within one read of many records (thousands, few projects). */
function perProject<R extends RecordPlace>(
	visible: (record: R) => boolean,
): (record: R) => boolean {
	const seen = new Map<string, boolean>();
	return (record) => {
		const key = `${record.machine}\u0000${record.project_id}\u0000${record.project_title}\u0000${record.project_path}`;
		let answer = seen.get(key);
		if (answer === undefined) {
			answer = visible(record);
			seen.set(key, answer);
		}
		return answer;
	};
}
