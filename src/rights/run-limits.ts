/**
 * The limits a client's runs are held to, checked before anything is sent to T3 (CONTRACT.md
 * "Clients and rights"): a run never above the client's level (a new thread defaults to it; an
 * explicit higher mode, or a continuation of a thread whose mode is higher, is refused), and at
 * most `max_active_runs` of its threads' runs going or queued at once, counted from the shells
 * the connector already follows.
 */
import type { ClientConfig } from "../config/types.ts";
import type { Fleet } from "../fleet/fleet.ts";
import { BUSY_RUN_STATUSES } from "../t3/model.ts";
import { defaultModeFor, modeWithin } from "./levels.ts";
import { RightsError, whoIs } from "./refusal.ts";

const escalation = (client: ClientConfig, what: string) =>
	new RightsError(
		"runtime_mode_escalation_denied",
		`${what}; ${whoIs(client)} runs at most at ${client.access}. Use runtime_mode "${defaultModeFor(client.access)}" (or lower), or ask the operator for a client with that access.`,
	);

/** The mode of a new thread: the one asked when within the level, else the level itself. */
export function newThreadMode(
	client: ClientConfig | undefined,
	asked: string | undefined,
): string {
	if (!client) return asked ?? "full-access";
	if (asked === undefined) return defaultModeFor(client.access);
	if (!modeWithin(client.access, asked))
		throw escalation(
			client,
			`runtime_mode "${asked}" is above this client's level`,
		);
	return asked;
}

/** A continuation (follow-up, steer, restart, fork) of a thread at `current` mode. */
export function checkContinuation(
	client: ClientConfig | undefined,
	threadId: string,
	current: string | undefined,
	asked: string | undefined,
): void {
	if (!client) return;
	if (asked !== undefined) {
		if (!modeWithin(client.access, asked))
			throw escalation(
				client,
				`runtime_mode "${asked}" is above this client's level`,
			);
		return;
	}
	const mode = current ?? "full-access";
	if (!modeWithin(client.access, mode))
		throw escalation(
			client,
			`thread "${threadId}" runs at "${mode}", above this client's level (pass a runtime_mode within it to lower the thread first)`,
		);
}

/** Refuses a dispatch that would take the client past `max_active_runs`. */
export function checkActiveRuns(
	client: ClientConfig | undefined,
	fleet: Fleet,
	ownThreads: string[],
): void {
	const cap = client?.maxActiveRuns ?? null;
	if (client === undefined || cap === null) return;
	const holding: string[] = [];
	for (const id of ownThreads) {
		const shell = fleet.locate(id)?.thread;
		if (
			shell &&
			(shell.activeRunId !== null || BUSY_RUN_STATUSES.has(shell.status))
		)
			holding.push(id);
	}
	if (holding.length + 1 <= cap) return;
	throw new RightsError(
		"max_active_runs_reached",
		`${whoIs(client)} may have ${cap} run${cap === 1 ? "" : "s"} going or queued at once (max_active_runs), and its threads ${holding.join(", ")} hold ${holding.length === 1 ? "it" : "them"}. Wait for one to finish (t3_wait) or stop it (t3_interrupt), then dispatch again.`,
	);
}
