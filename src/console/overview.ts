/**
 * What `/console` shows, gathered through the signed-in client's scoped services: its machines
 * (state, reason, runs going; token expiry for full-access sessions), then the threads that need
 * a person, the running ones, and a page of the latest settled (50 at a time, keyset paging as
 * `t3_threads` pages: it never reads every thread). Full-access sessions also see the outbox.
 */
import type { ClientConfig } from "../config/types.ts";
import type { FleetMachine } from "../fleet/fleet.ts";
import { machinePool } from "../pool/report.ts";
import { slotsOf } from "../rights/run-slots.ts";
import type { Services } from "../services.ts";
import { outboxStats } from "../store/outbox-stats.ts";
import { listThreads } from "../threads/read/list.ts";
import { projectsFor } from "../threads/read/list-machines.ts";
import {
	allShown,
	inState,
	machineListing,
} from "../threads/read/thread-index.ts";
import { redact } from "../util/redact.ts";
import { type ConsoleRow, rowOfListed } from "./rows.ts";

export const PAGE_SIZE = 50;
/** Threads needing a person or running, shown at most (each list is newest first). */
export const SECTION_MAX = 100;
const WEEK_MS = 7 * 86_400_000;

export interface MachineRow {
	name: string;
	state: string;
	reason: string | null;
	runs: number;
	/** Full-access sessions only: when the machine's token stops working (epoch ms), or null. */
	token_expires_at: number | null;
	/** The expiry is within 7 days (or past). */
	token_warning: boolean;
	/** Busy threads on the machine, whoever started them, against its cap (src/pool). */
	active_runs: number;
	max_active_runs: number | null;
	/** Per provider T3 reports usage for: its most used window (null: unknown). */
	usage: { provider: string; label: string; used_percent: number | null }[];
}

export interface OutboxView {
	pending: number;
	oldest_pending_s: number;
	dead: number;
	held: number;
	last_error: string | null;
}

/** A dispatch the server holds until a machine has room (CONTRACT.md "One pool"). */
export interface HeldItem {
	thread_id: string;
	title: string;
	/** The machine named, or the pattern it waits for. */
	machine: string;
	project: string;
	position: number;
	reason: string;
	detail: string;
	since: string;
}

export interface Overview {
	machines: MachineRow[];
	/** The client's held dispatches (absent: none), oldest first. */
	held?: HeldItem[];
	attention: ConsoleRow[];
	active: ConsoleRow[];
	/** More threads need a person, or run, than the lists show (the newest `SECTION_MAX`). */
	more: { attention: boolean; active: boolean };
	settled: ConsoleRow[];
	/** The cursor of the next settled page, or null. */
	next: string | null;
	/** Machines that could not be read (offline): their threads are missing here. */
	unavailable: string[];
	outbox: OutboxView | null;
}

export const isOperator = (client: ClientConfig) =>
	client.access === "full-access";

/** Threads going on a machine within the client's reach (from the kept listing: no T3 call). */
function runsGoing(scoped: Services, entry: FleetMachine): number {
	if (entry.machine.status().state !== "online") return 0;
	const projects = projectsFor(scoped.threadDeps, entry, undefined);
	if (projects.size === 0) return 0;
	const list = machineListing(entry.machine);
	const active = inState(list, "active");
	if (allShown(list, projects)) return active.length;
	let n = 0;
	for (const i of active) {
		const thread = list.threads[i];
		if (thread && projects.has(thread.projectId) && !thread.deletedAt) n += 1;
	}
	return n;
}

export function machineRow(
	scoped: Services,
	entry: FleetMachine,
	client: ClientConfig,
	now: number,
): MachineRow {
	const status = entry.machine.status();
	const pool = machinePool(
		scoped.threadDeps.slots ?? slotsOf(scoped.fleet, scoped.threadDeps.now),
		entry,
	);
	const expires =
		isOperator(client) && status.tokenExpiresAt
			? Date.parse(status.tokenExpiresAt)
			: Number.NaN;
	return {
		name: entry.config.name,
		state: status.state,
		reason: status.reason ? redact(status.reason, 300) : null,
		runs: runsGoing(scoped, entry),
		token_expires_at: Number.isNaN(expires) ? null : expires,
		token_warning: !Number.isNaN(expires) && expires - now <= WEEK_MS,
		active_runs: pool.active_runs,
		max_active_runs: pool.max_active_runs,
		usage: pool.usage.map((u) => {
			let top: (typeof u.windows)[number] | undefined;
			for (const w of u.windows)
				if (
					w.used_percent !== null &&
					(top?.used_percent == null || w.used_percent > top.used_percent)
				)
					top = w;
			return {
				provider: u.provider,
				label: top?.label ?? "usage",
				used_percent: top?.used_percent ?? null,
			};
		}),
	};
}

/** The client's held dispatches, oldest first (its own; every one for full rights). */
export function heldItems(scoped: Services): HeldItem[] {
	const holding = scoped.threadDeps.holding;
	if (!holding) return [];
	const client = scoped.threadDeps.client;
	const items: HeldItem[] = [];
	for (const head of holding.open()) {
		if (client && head.client !== client.name) continue;
		const shape = holding.shape(head);
		items.push({
			thread_id: head.thread_id,
			title: head.title,
			machine: head.machine,
			project: head.project,
			position: shape.position,
			reason: shape.reason,
			detail: redact(shape.detail, 300),
			since: shape.since,
		});
		if (items.length >= SECTION_MAX) break;
	}
	return items;
}

export function outboxView(services: Services, now: number): OutboxView {
	const stats = outboxStats(services.db, now);
	const lastError = services.events.delivery.lastError() ?? stats.lastError;
	return {
		pending: stats.pending,
		oldest_pending_s: stats.oldestPendingS,
		dead: stats.dead,
		held: stats.held,
		last_error: lastError ? redact(lastError, 300) : null,
	};
}

export async function overview(
	services: Services,
	scoped: Services,
	client: ClientConfig,
	cursor: string | undefined,
): Promise<Overview> {
	const now = services.threadDeps.now();
	const deps = scoped.threadDeps;
	const [attention, active, settled] = await Promise.all([
		listThreads(deps, { state: "attention", limit: SECTION_MAX }),
		listThreads(deps, { state: "active", limit: SECTION_MAX }),
		listThreads(deps, {
			state: "settled",
			limit: PAGE_SIZE,
			...(cursor !== undefined ? { cursor } : {}),
		}),
	]);
	const rows = (list: typeof attention) =>
		list.threads.map((t) => rowOfListed(scoped, t));
	return {
		machines: scoped.fleet
			.list()
			.map((entry) => machineRow(scoped, entry, client, now)),
		held: heldItems(scoped),
		attention: rows(attention),
		active: rows(active),
		more: {
			attention: attention.next_cursor !== null,
			active: active.next_cursor !== null,
		},
		settled: rows(settled),
		next: settled.next_cursor,
		unavailable: [...new Set(settled.unavailable.map((u) => u.machine))],
		outbox: isOperator(client) ? outboxView(services, now) : null,
	};
}
