/**
 * Events about machines rather than threads (CONTRACT.md "Faithful edges"): `machine.token_expiring`
 * 7 days and 1 day before a token's expiry (as T3's `/api/auth/session` says), once each, and
 * `machine.unauthorized` on each transition into `unauthorized` (a token refused, expired or
 * unreadable), again only after the machine was online in between. What was raised is kept in
 * the state file (store/machine-alerts.ts), so a restart raises neither twice. The rows go
 * through the same outbox as thread events, ordered per machine under the key `machine/<name>`
 * (a `/` is in no thread id we use: they are T3 URL path segments), with no origin: they belong
 * to no conversation, so they carry no `X-Conversation-Origin` header.
 */
import type { Fleet, FleetMachine } from "../fleet/fleet.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { GroupCommit } from "../store/group-commit.ts";
import type {
	MachineAlertStore,
	MachineAlerts,
} from "../store/machine-alerts.ts";
import type { Outbox } from "../store/outbox.ts";
import { mintNewToken } from "../t3/connect/token-expiry.ts";
import type { Clock } from "../util/clock.ts";
import type { Logger } from "../util/log.ts";
import { redact } from "../util/redact.ts";
import { eventId } from "./event.ts";

export type MachineEventType =
	| "machine.token_expiring"
	| "machine.unauthorized";

/** The webhook body of a machine event. */
export interface MachineEventBody {
	id: string;
	type: MachineEventType;
	occurred_at: string;
	machine: string;
	/** When the machine's token stops working, as T3 last said; null when unknown. */
	token_expires_at: string | null;
	reason: string;
}

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
/** How long before a token's expiry each warning is raised, longest first. */
export const EXPIRY_WARNINGS_MS = [7 * DAY_MS, DAY_MS];
/**
 * The longest a machine's expiry goes unchecked: timers stay short (setTimeout caps near 25
 * days) and a wall clock that jumped or a suspended host is noticed within the hour.
 */
const RECHECK_MS = HOUR_MS;
const PREFIX = "machine/";

/** The outbox key (its `thread_id`) under which a machine's events are ordered. */
export const machineEventKey = (machine: string) => `${PREFIX}${machine}`;

/** The machine an outbox key names, or null for a thread's key. */
export function machineOfEventKey(key: string): string | null {
	return key.startsWith(PREFIX) ? key.slice(PREFIX.length) : null;
}

/**
 * The warning due now for a token expiring at `expiresAt`: the shortest lead time already
 * reached (a token first seen 12 hours before its expiry gets the 1-day warning only), or null
 * when none is (or the token has expired: that is `machine.unauthorized`'s).
 */
export function dueWarning(expiresAt: string, now: number): number | null {
	const left = Date.parse(expiresAt) - now;
	if (!(left > 0)) return null;
	let due: number | null = null;
	for (const before of EXPIRY_WARNINGS_MS) if (left <= before) due = before;
	return due;
}

/** When to look at this expiry again: the next warning's time, or within the hour. */
function nextCheckIn(expiresAt: string, now: number): number | null {
	const left = Date.parse(expiresAt) - now;
	if (!(left > 0)) return null;
	const next = EXPIRY_WARNINGS_MS.find((before) => before < left);
	const wait = next === undefined ? left : left - next;
	return Math.min(wait, RECHECK_MS);
}

function inWords(ms: number): string {
	const hours = Math.round(ms / HOUR_MS);
	if (hours >= 48) return `in ${Math.round(ms / DAY_MS)} days`;
	if (hours >= 2) return `in ${hours} hours`;
	return "within 2 hours";
}

export interface MachineEventsDeps {
	fleet: Fleet;
	outbox: Outbox;
	alerts: MachineAlertStore;
	commits: GroupCommit;
	clock: Clock;
	metrics: Metrics;
	log: Logger;
	/** Called after new rows were committed (wakes the delivery worker). */
	onEmitted: () => void;
}

export interface MachineEvents {
	start(): void;
	/** Unsubscribes, cancels the expiry checks and waits for writes under way. */
	stop(): Promise<void>;
	/** Resolves when no write is under way (tests). */
	idle(): Promise<void>;
}

export function createMachineEvents(deps: MachineEventsDeps): MachineEvents {
	const { alerts, outbox, clock } = deps;
	const unsubscribes: (() => void)[] = [];
	const timers = new Map<string, () => void>();
	const writes = new Set<Promise<unknown>>();
	/**
	 * What was raised, per machine: read from the state file at start, then decided here at once
	 * (the commits run later, in order), so two changes before a commit cannot both raise.
	 */
	const raised = new Map<string, MachineAlerts>();
	let stopped = true;

	const commit = (name: string, what: string, write: () => boolean) => {
		const done = deps.commits.run(write).then(
			(emitted) => {
				if (!emitted) return;
				deps.log.info("machine event", { machine: name, type: what });
				deps.metrics.inc("t3code_mcp_events_emitted_total");
				deps.onEmitted();
			},
			(error: unknown) => {
				// Not written: what the file says is what was raised (a later check tries again).
				raised.delete(name);
				deps.log.error("recording a machine event failed", {
					machine: name,
					type: what,
					error,
				});
			},
		);
		writes.add(done);
		void done.finally(() => writes.delete(done));
	};

	/** Writes the event and, in the same commit, that it was raised. */
	const raise = (
		entry: FleetMachine,
		type: MachineEventType,
		dedupe: string,
		fields: Pick<MachineEventBody, "token_expires_at" | "reason">,
		record: () => void,
	) => {
		const name = entry.config.name;
		const key = machineEventKey(name);
		// When it happened, not when the commit (a turn later) runs.
		const now = clock.now();
		commit(name, type, () => {
			record();
			if (outbox.has(key, dedupe)) return false;
			const id = eventId();
			const body: MachineEventBody = {
				id,
				type,
				occurred_at: new Date(now).toISOString(),
				machine: name,
				token_expires_at: fields.token_expires_at,
				// Reasons quote T3 and the file system: capped and masked (CONTRACT.md "HTTP").
				reason: redact(fields.reason),
			};
			outbox.insert({
				id,
				thread_id: key,
				thread_seq: alerts.nextSeq(name),
				dedupe_key: dedupe,
				type,
				origin: null,
				body: JSON.stringify(body),
				created_at: now,
			});
			return true;
		});
	};

	const label = (entry: FleetMachine) =>
		`T3 machine "${entry.config.name}" (${entry.config.url})`;

	const checkExpiry = (
		entry: FleetMachine,
		known: MachineAlerts,
		expiresAt: string,
	) => {
		const name = entry.config.name;
		const now = clock.now();
		const due = dueWarning(expiresAt, now);
		const warned =
			known.expiry === expiresAt &&
			known.warnedBeforeMs !== null &&
			due !== null &&
			known.warnedBeforeMs <= due;
		if (due !== null && !warned) {
			raised.set(name, { ...known, expiry: expiresAt, warnedBeforeMs: due });
			raise(
				entry,
				"machine.token_expiring",
				`token_expiring:${expiresAt}:${due}`,
				{
					token_expires_at: expiresAt,
					reason: `${label(entry)}: token expires at ${expiresAt}, ${inWords(Date.parse(expiresAt) - now)}; ${mintNewToken(entry.config.tokenFile)}`,
				},
				() => alerts.warned(name, expiresAt, due),
			);
		}
		const wait = nextCheckIn(expiresAt, now);
		if (wait !== null)
			timers.set(
				name,
				clock.setTimer(() => {
					timers.delete(name);
					evaluate(entry);
				}, wait),
			);
	};

	const evaluate = (entry: FleetMachine) => {
		if (stopped) return;
		const name = entry.config.name;
		timers.get(name)?.();
		timers.delete(name);
		const status = entry.machine.status();
		const expiresAt = status.tokenExpiresAt ?? null;
		let known = raised.get(name) ?? alerts.get(name);
		raised.set(name, known);
		if (status.state === "unauthorized") {
			if (known.unauthorized) return;
			raised.set(name, { ...known, unauthorized: true });
			raise(
				entry,
				"machine.unauthorized",
				`unauthorized:${eventId()}`,
				{
					token_expires_at: expiresAt,
					reason: status.reason ?? `${label(entry)}: unauthorized`,
				},
				() => alerts.setUnauthorized(name, true),
			);
			return;
		}
		// Online: the token worked, so the next refusal is a new transition.
		if (status.state === "online" && known.unauthorized) {
			known = { ...known, unauthorized: false };
			raised.set(name, known);
			commit(name, "recovered", () => {
				alerts.setUnauthorized(name, false);
				return false;
			});
		}
		if (expiresAt !== null) checkExpiry(entry, known, expiresAt);
	};

	const idle = async () => {
		while (writes.size) await Promise.all([...writes]);
	};

	return {
		start() {
			stopped = false;
			unsubscribes.push(
				deps.fleet.forEachMachine((entry) => {
					evaluate(entry);
					return entry.machine.onChange((change) => {
						if (change.kind === "state") evaluate(entry);
					});
				}),
			);
		},
		async stop() {
			stopped = true;
			for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
			for (const cancel of timers.values()) cancel();
			timers.clear();
			await idle();
		},
		idle,
	};
}
