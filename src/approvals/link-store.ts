/**
 * The approval links of the state file: one row per request a link was made for, keyed by the
 * token's SHA-256 (never the token). A row is `open` until a POST takes it (`deciding`, one
 * POST only), then `decided`; or `settled` when the request ended another way. `config_key`
 * names the `[approvals]` it was made under: another one makes the link dead.
 */
import type { Db } from "../store/db.ts";

/** What a link page shows, as T3 said it when the link was made (masked). */
export interface LinkView {
	machine: string;
	project: { id: string; title: string; path: string | null };
	title: string;
	prompt: string;
	/** T3's request kind: `command`, `file-change`, `file-read`, `mcp-elicitation`, … */
	request_kind: string;
	decisions: { decision: string; label: string; warning: string | null }[];
	app_name: string | null;
}

export type LinkStatus = "open" | "deciding" | "decided" | "settled";

export interface LinkRow {
	token_hash: string;
	thread_id: string;
	machine: string;
	request_id: string;
	config_key: string;
	view: LinkView;
	status: LinkStatus;
	decision: string | null;
	decided_by: string | null;
	via: string | null;
	created_at: number;
	expires_at: number;
	settled_at: number | null;
}

type RawRow = Omit<LinkRow, "view"> & { view: string };

/** The table, created by the migration in store/db.ts. */
export const LINKS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS approval_links (
	token_hash TEXT PRIMARY KEY,
	thread_id TEXT NOT NULL,
	machine TEXT NOT NULL,
	request_id TEXT NOT NULL,
	config_key TEXT NOT NULL,
	view TEXT NOT NULL,
	status TEXT NOT NULL,
	decision TEXT,
	decided_by TEXT,
	via TEXT,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	settled_at INTEGER,
	UNIQUE (thread_id, request_id)
) STRICT;
CREATE INDEX IF NOT EXISTS approval_links_unsettled ON approval_links(thread_id) WHERE settled_at IS NULL;`;

const parse = (row: RawRow | null): LinkRow | undefined =>
	row === null ? undefined : { ...row, view: JSON.parse(row.view) as LinkView };

export function createLinkStore(db: Db) {
	const byHash = db.query<RawRow, { hash: string }>(
		"SELECT * FROM approval_links WHERE token_hash = $hash",
	);
	const byRequest = db.query<RawRow, { thread: string; request: string }>(
		"SELECT * FROM approval_links WHERE thread_id = $thread AND request_id = $request",
	);
	const unsettled = db.query<RawRow, []>(
		"SELECT * FROM approval_links WHERE settled_at IS NULL",
	);
	const insert = db.query(
		`INSERT OR IGNORE INTO approval_links (token_hash, thread_id, machine, request_id, config_key, view, status, created_at, expires_at)
		 VALUES ($hash, $thread, $machine, $request, $config, $view, 'open', $now, $expires)`,
	);
	// The one atomic step of a POST: only the first takes an open, live link.
	const take = db.query(
		"UPDATE approval_links SET status = 'deciding', decision = $decision WHERE token_hash = $hash AND status = 'open' AND expires_at > $now AND settled_at IS NULL",
	);
	const giveBack = db.query(
		"UPDATE approval_links SET status = 'open', decision = NULL WHERE token_hash = $hash AND status = 'deciding'",
	);
	const decided = db.query(
		"UPDATE approval_links SET status = 'decided', decided_by = $client, via = 'link', settled_at = coalesce(settled_at, $now) WHERE token_hash = $hash",
	);
	const settle = db.query(
		`UPDATE approval_links SET settled_at = $now,
			status = CASE WHEN status = 'open' THEN 'settled' ELSE status END,
			decision = CASE WHEN status = 'open' THEN $decision ELSE decision END,
			decided_by = CASE WHEN status = 'open' THEN $client ELSE decided_by END,
			via = CASE WHEN status = 'open' THEN $via ELSE via END
		 WHERE thread_id = $thread AND request_id = $request AND settled_at IS NULL`,
	);
	const noteDecision = db.query(
		"UPDATE approval_links SET decision = $decision WHERE thread_id = $thread AND request_id = $request AND status = 'settled' AND decision IS NULL",
	);
	return {
		byHash: (hash: string) => parse(byHash.get({ hash })),
		/** The decision T3 recorded for a request settled elsewhere, once read. */
		noteDecision(thread: string, request: string, decision: string): void {
			noteDecision.run({ thread, request, decision });
		},
		byRequest: (thread: string, request: string) =>
			parse(byRequest.get({ thread, request })),
		/** Links whose request has not ended yet (the watcher checks them against T3). */
		unsettled: (): LinkRow[] => unsettled.all().map((r) => parse(r) as LinkRow),
		/** Records a new link; false when this request has one already. */
		insert(row: {
			hash: string;
			thread: string;
			machine: string;
			request: string;
			config: string;
			view: LinkView;
			now: number;
			expires: number;
		}): boolean {
			return (
				insert.run({ ...row, view: JSON.stringify(row.view) }).changes === 1
			);
		},
		/** Takes an open, unexpired link for one decision; false when another took it first. */
		take: (hash: string, decision: string, now: number): boolean =>
			take.run({ hash, decision, now }).changes === 1,
		/** The decision could not be sent: the link is usable again. */
		giveBack(hash: string): void {
			giveBack.run({ hash });
		},
		/** The decision reached T3. */
		decided(hash: string, client: string, now: number): void {
			decided.run({ hash, client, now });
		},
		/**
		 * The request ended (answered anywhere, dismissed, the run ended): an open link records
		 * how, when known; a link being decided keeps its own decision. True when it changed.
		 */
		settle(
			thread: string,
			request: string,
			how: {
				decision: string | null;
				client: string | null;
				via: string | null;
			},
			now: number,
		): boolean {
			return settle.run({ thread, request, now, ...how }).changes === 1;
		},
	};
}

export type LinkStore = ReturnType<typeof createLinkStore>;
