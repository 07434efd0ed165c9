/**
 * Where a new thread goes when `t3_dispatch` names machines by pattern (CONTRACT.md "One
 * pool"). Candidates: the machines matching the pattern within the client's reach (its fleet
 * view: machines outside it never appear). One has room when it is online (its shell
 * synchronized since its last connect), has the project, the provider of the model in effect
 * is ready, it is below its `max_active_runs` (and the client below its own) and no usage window
 * of that provider is used up (nor did a run there fail on a usage limit whose reset is ahead).
 * Among those: fewest busy threads, then the lowest `used_percent`, then config order.
 * Synchronous from the first look to the slot: the caller takes the slot before any await.
 */
import { fnmatchToRegExp } from "../config/fnmatch.ts";
import type { Fleet, FleetMachine } from "../fleet/fleet.ts";
import { RightsError } from "../rights/refusal.ts";
import type { RunCap, RunSlots } from "../rights/run-slots.ts";
import type { ProviderStatus } from "../t3/capabilities/provider-status.ts";
import type { ProjectShell } from "../t3/model.ts";
import { activeRuns, limitedUntil, machineCap } from "./capacity.ts";
import { highestUsed, usedUpWindow } from "./usage.ts";

/** Why a candidate has no room (`not_before`: a held dispatch's time has not come). */
export type SkipReason =
	| "not_before"
	| "client_cap"
	| "machine_cap"
	| "usage_limit"
	| "offline"
	| "provider_not_ready"
	| "no_project";

export interface Skipped {
	machine: string;
	reason: SkipReason;
	detail: string;
}

/** Why the chosen machine: the only one with room, or what set it before the others. */
export type PlacedBecause =
	| "only_room"
	| "fewest_busy"
	| "lowest_usage"
	| "config_order";

export interface Placement {
	machine: string;
	reason: PlacedBecause;
	skipped: Skipped[];
}

/** The candidates' reasons a `no_capacity` refusal carries (a dispatch held instead). */
export const skippedOf = (error: unknown): Skipped[] | undefined =>
	(error as { skipped?: Skipped[] } | null)?.skipped;

/** Whether a `machine` argument is a pattern rather than a name. */
export const isMachinePattern = (value: string): boolean => /[*?[]/.test(value);

export interface PlaceInput {
	/** The `machine` pattern as given. */
	pattern: string;
	/** The client's fleet: its reach. */
	fleet: Fleet;
	/** The `project` argument: an id, title or path. */
	project: string;
	/** The provider instance of the model a new thread there would run; null when none. */
	providerFor(entry: FleetMachine, project: ProjectShell): string | null;
	ledger: RunSlots;
	/** The client's own `max_active_runs`, or null. */
	clientCap: RunCap | null;
	now: number;
}

export interface Placed {
	entry: FleetMachine;
	project: ProjectShell;
	placement: Placement;
	/** The caps to take the dispatch's slot in, at once (run-slots.ts). */
	caps: RunCap[];
}

interface Room {
	entry: FleetMachine;
	project: ProjectShell;
	busy: number;
	used: number | null;
}

const percent = (n: number) => `${Math.round(n * 10) / 10} %`;

/** The one project `ref` names among the machine's (reached) projects, or why not. */
function projectOn(
	fleet: Fleet,
	entry: FleetMachine,
	ref: string,
): ProjectShell | string {
	const matches = fleet
		.projects(entry)
		.filter((p) => p.id === ref || p.title === ref || p.workspaceRoot === ref);
	if (matches.length === 1) return matches[0] as ProjectShell;
	return matches.length === 0
		? `no project "${ref}" here`
		: `project "${ref}" is ambiguous here (${matches.length} match): pass its id with a named machine`;
}

/**
 * Picks the machine, or throws: a pattern that matches no reached machine (naming the ones the
 * client reaches), `no_project` when none could ever take it, `no_capacity` listing each
 * candidate's reason when none has room now.
 */
export function place(input: PlaceInput): Placed {
	const { fleet, ledger, now } = input;
	const match = fnmatchToRegExp(input.pattern);
	const candidates = fleet.list().filter((e) => match.test(e.config.name));
	if (candidates.length === 0) {
		const names = fleet.names();
		throw new RightsError(
			"no_machine",
			`machine: no machine you reach matches "${input.pattern}"; ${names.length === 0 ? "you reach no machine" : `the machines you reach: ${names.join(", ")}`}.`,
		);
	}
	const clientFull =
		input.clientCap !== null &&
		ledger.count(input.clientCap) >= input.clientCap.cap;
	const skipped: Skipped[] = [];
	const rooms: Room[] = [];
	const skip = (entry: FleetMachine, reason: SkipReason, detail: string) =>
		skipped.push({ machine: entry.config.name, reason, detail });
	for (const entry of candidates) {
		const status = entry.machine.status();
		if (status.state !== "online") {
			skip(
				entry,
				"offline",
				status.state === "connecting"
					? "connecting: its shell has not synchronized since it (re)connected"
					: `${status.state}${status.reason ? `: ${status.reason}` : ""}`,
			);
			continue;
		}
		const project = projectOn(fleet, entry, input.project);
		if (typeof project === "string") {
			skip(entry, "no_project", project);
			continue;
		}
		const instanceId = input.providerFor(entry, project);
		if (instanceId === null) {
			skip(
				entry,
				"provider_not_ready",
				"no model to use: pass model or set one in the machine's config",
			);
			continue;
		}
		const providers = entry.machine.providers?.() ?? null;
		let provider: ProviderStatus | undefined;
		if (providers !== null) {
			provider = providers.find((p) => p.instanceId === instanceId);
			if (!provider?.ready) {
				skip(
					entry,
					"provider_not_ready",
					provider?.reason ?? `${instanceId} is not on this machine`,
				);
				continue;
			}
			const full = usedUpWindow(provider, now);
			if (full) {
				skip(
					entry,
					"usage_limit",
					`${instanceId}'s ${full.label} window is at ${percent(full.usedPercent ?? 100)}${full.resetsAt ? ` until ${full.resetsAt}` : ""}`,
				);
				continue;
			}
		}
		const limited = limitedUntil(entry.machine, instanceId, now);
		if (limited !== undefined) {
			skip(
				entry,
				"usage_limit",
				`a run of ${instanceId} here failed on its usage limit, which resets at ${new Date(limited).toISOString()}`,
			);
			continue;
		}
		const cap = machineCap(entry);
		const busy = activeRuns(ledger, entry);
		if (busy >= cap.cap) {
			skip(entry, "machine_cap", `${busy} of max_active_runs ${cap.cap} busy`);
			continue;
		}
		if (clientFull) {
			skip(
				entry,
				"client_cap",
				`your client has max_active_runs ${input.clientCap?.cap} busy`,
			);
			continue;
		}
		rooms.push({ entry, project, busy, used: highestUsed(provider) });
	}
	const best = choose(rooms);
	if (!best) {
		const list = skipped.map((s) => `${s.machine} (${s.reason}: ${s.detail})`);
		if (skipped.every((s) => s.reason === "no_project"))
			throw new RightsError(
				"no_project",
				`no machine matching "${input.pattern}" that you reach has project "${input.project}": ${list.join("; ")}. t3_projects lists each machine's projects.`,
			);
		throw Object.assign(
			new RightsError(
				"no_capacity",
				`no machine matching "${input.pattern}" has room now: ${list.join("; ")}. Try again when a run ends (t3_usage shows each machine's busy threads and usage).`,
			),
			{ skipped },
		);
	}
	return {
		entry: best.room.entry,
		project: best.room.project,
		placement: {
			machine: best.room.entry.config.name,
			reason: best.because,
			skipped,
		},
		caps: [
			...(input.clientCap ? [input.clientCap] : []),
			machineCap(best.room.entry),
		],
	};
}

/**
 * Fewest busy threads, then the lowest `used_percent` (unknown ties with anything), then config
 * order; one pass, keeping the earlier machine on a tie.
 */
function choose(
	rooms: Room[],
): { room: Room; because: PlacedBecause } | undefined {
	let best: Room | undefined;
	for (const room of rooms) {
		if (!best || room.busy < best.busy) best = room;
		else if (
			room.busy === best.busy &&
			room.used !== null &&
			best.used !== null &&
			room.used < best.used
		)
			best = room;
	}
	if (!best) return undefined;
	if (rooms.length === 1) return { room: best, because: "only_room" };
	const chosen = best;
	const tied = rooms.filter((r) => r !== chosen && r.busy === chosen.busy);
	if (tied.length === 0) return { room: chosen, because: "fewest_busy" };
	const lower =
		chosen.used !== null &&
		tied.every(
			(r) => r.used !== null && (r.used as number) > (chosen.used as number),
		);
	return { room: chosen, because: lower ? "lowest_usage" : "config_order" };
}
