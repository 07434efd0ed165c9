/**
 * Idempotency keys, for every tool that takes `idempotency_key`: one row per (tool, key) naming
 * one operation. The row holds the operation's arguments (canonical JSON, see
 * `fingerprint` in src/threads/dispatch/idempotency.ts), the thread it acted on, an optional
 * tool-specific reference and, once done, its first result.
 *
 * API (use it through src/threads/dispatch/idempotency.ts, which adds the rules):
 * - `get(tool, key)`: the row; `"hidden"` when it acted on a thread that is now hidden (its
 *   content never leaves this store then); undefined when the key is unused.
 * - `insert(row)`: claims a key; throws SQLITE_CONSTRAINT_PRIMARYKEY when it is taken (two
 *   calls at once: the loser reads the winner's row).
 * - `complete(tool, key, threadId, result, place?)`: stores the first result and, for a thread
 *   that may have no thread record, where it lives (machine and project), so whether it is
 *   hidden later is known.
 * - `remove(tool, key)` / `removeRef(tool, ref)`: frees a key whose operation did not happen.
 * - `moveRef(tool, key, from, to)`: points the key at its next step, only if it still points at
 *   `from`; false when another call moved it first.
 */
import { maskDeep, maskSecrets } from "../util/redact.ts";
import type { Db } from "./db.ts";

export interface OperationRecord {
	tool: string;
	key: string;
	/** Canonical JSON of the arguments; null for keys recorded before arguments were (they match any). */
	args: string | null;
	thread_id: string | null;
	/** Tool-specific pointer to what was done (t3_dispatch: the dispatch's command_id). */
	ref: string | null;
	/** JSON of the first result; null while the operation runs, or when it stopped mid-way. */
	result: string | null;
	created_at: number;
	/** The thread's machine and project when the operation ran (null for t3_dispatch rows). */
	machine: string | null;
	project_id: string | null;
	project_title: string | null;
	project_path: string | null;
}

/** Where an operation's thread lives (its machine and project). */
export interface OperationPlace {
	machine: string;
	project_id: string;
	project_title: string;
	project_path: string;
}

export function createOperationStore(
	db: Db,
	/**
	 * Whether the operation's thread is one the allowlist now hides: its thread record (see
	 * ThreadStore.isHidden), else the place stored with the row.
	 */
	isHidden: (threadId: string, row: OperationRecord) => boolean = () => false,
) {
	const get = db.query<OperationRecord, { tool: string; key: string }>(
		"SELECT * FROM operations WHERE tool = $tool AND key = $key",
	);
	const insert = db.query(
		`INSERT INTO operations (tool, key, args, thread_id, ref, created_at)
		 VALUES ($tool, $key, $args, $thread_id, $ref, $created_at)`,
	);
	const complete = db.query(
		`UPDATE operations SET thread_id = $threadId, result = $result, machine = $machine,
		   project_id = $project_id, project_title = $project_title, project_path = $project_path
		 WHERE tool = $tool AND key = $key`,
	);
	const remove = db.query(
		"DELETE FROM operations WHERE tool = $tool AND key = $key",
	);
	const removeRef = db.query(
		"DELETE FROM operations WHERE tool = $tool AND ref = $ref",
	);
	const moveRef = db.query(
		"UPDATE operations SET ref = $to WHERE tool = $tool AND key = $key AND ref = $from",
	);

	return {
		get: (
			tool: string,
			key: string,
		): OperationRecord | "hidden" | undefined => {
			const row = get.get({ tool, key });
			if (!row) return undefined;
			return row.thread_id !== null && isHidden(row.thread_id, row)
				? "hidden"
				: row;
		},
		insert: (
			row: Omit<
				OperationRecord,
				"result" | "machine" | "project_id" | "project_title" | "project_path"
			>,
		) => {
			insert.run(row);
		},
		complete: (
			tool: string,
			key: string,
			threadId: string | null,
			result: unknown,
			place?: OperationPlace,
		) => {
			complete.run({
				tool,
				key,
				threadId,
				// A stored result quotes T3 like the tool result it repeats.
				result: JSON.stringify(maskDeep(result)),
				machine: place?.machine ?? null,
				project_id: place?.project_id ?? null,
				project_title: place ? maskSecrets(place.project_title) : null,
				project_path: place ? maskSecrets(place.project_path) : null,
			});
		},
		remove: (tool: string, key: string) => {
			remove.run({ tool, key });
		},
		removeRef: (tool: string, ref: string) => {
			removeRef.run({ tool, ref });
		},
		moveRef: (tool: string, key: string, from: string, to: string): boolean =>
			moveRef.run({ tool, key, from, to }).changes === 1,
	};
}

export type OperationStore = ReturnType<typeof createOperationStore>;

/**
 * An operation is hidden when its thread record is, or (for a thread without one) when the
 * place stored with the row is outside what `allowsRecord` allows now.
 */
export function hiddenOperation(
	isThreadHidden: (threadId: string) => boolean,
	allowsRecord: (record: {
		machine: string;
		project_id: string;
		project_title: string | null;
		project_path: string | null;
	}) => boolean,
): (threadId: string, row: OperationRecord) => boolean {
	return (threadId, row) =>
		isThreadHidden(threadId) ||
		(row.machine !== null &&
			row.project_id !== null &&
			!allowsRecord({
				...row,
				machine: row.machine,
				project_id: row.project_id,
			}));
}
