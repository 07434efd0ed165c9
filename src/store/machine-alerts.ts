/**
 * What the machine events (src/events/machine-events.ts) have raised, kept in the state file so
 * a restart raises nothing twice: per machine, the token expiry last warned about and the
 * warning raised for it (how long before the expiry), whether a `machine.unauthorized` is open
 * (raised, and the machine not online since), and the sequence of the machine's events in the
 * outbox. Holds no token and no text from outside.
 */
import type { Db } from "./db.ts";

export interface MachineAlerts {
	/** The expiry last warned about (ISO) and how many ms before it that warning was. */
	expiry: string | null;
	warnedBeforeMs: number | null;
	/** A `machine.unauthorized` was raised and the machine has not been online since. */
	unauthorized: boolean;
}

export interface MachineAlertStore {
	get(machine: string): MachineAlerts;
	warned(machine: string, expiry: string, beforeMs: number): void;
	setUnauthorized(machine: string, open: boolean): void;
	/** The next sequence number of the machine's events (their order in the outbox). */
	nextSeq(machine: string): number;
}

export function createMachineAlertStore(db: Db): MachineAlertStore {
	// Made here rather than as a numbered migration, as token_expiries: one row per machine.
	db.exec(
		"CREATE TABLE IF NOT EXISTS machine_alerts (machine TEXT PRIMARY KEY, expiry TEXT, warned_before_ms INTEGER, unauthorized INTEGER NOT NULL DEFAULT 0, seq INTEGER NOT NULL DEFAULT 0) STRICT",
	);
	const read = db.query<
		{
			expiry: string | null;
			warned_before_ms: number | null;
			unauthorized: number;
		},
		[string]
	>(
		"SELECT expiry, warned_before_ms, unauthorized FROM machine_alerts WHERE machine = ?",
	);
	const warned = db.query(
		"INSERT INTO machine_alerts (machine, expiry, warned_before_ms) VALUES ($m, $e, $b) ON CONFLICT (machine) DO UPDATE SET expiry = $e, warned_before_ms = $b",
	);
	const unauthorized = db.query(
		"INSERT INTO machine_alerts (machine, unauthorized) VALUES ($m, $u) ON CONFLICT (machine) DO UPDATE SET unauthorized = $u",
	);
	const seq = db.query<{ seq: number }, { m: string }>(
		"INSERT INTO machine_alerts (machine, seq) VALUES ($m, 1) ON CONFLICT (machine) DO UPDATE SET seq = seq + 1 RETURNING seq",
	);
	return {
		get(machine) {
			const row = read.get(machine);
			return {
				expiry: row?.expiry ?? null,
				warnedBeforeMs: row?.warned_before_ms ?? null,
				unauthorized: row?.unauthorized === 1,
			};
		},
		warned(machine, expiry, beforeMs) {
			warned.run({ m: machine, e: expiry, b: beforeMs });
		},
		setUnauthorized(machine, open) {
			unauthorized.run({ m: machine, u: open ? 1 : 0 });
		},
		nextSeq: (machine) => seq.get({ m: machine })?.seq ?? 1,
	};
}
