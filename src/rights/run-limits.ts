/**
 * The limits a client's runs are held to, checked before anything is sent to T3 (CONTRACT.md
 * "Clients and rights"): a run never above the client's level (a new thread defaults to it; an
 * explicit higher mode, or a continuation of a thread whose mode is higher, is refused), and at
 * most `max_active_runs` of its threads busy at once (a cap held by run-slots.ts).
 */
import type { ClientConfig } from "../config/types.ts";
import { defaultModeFor, modeWithin } from "./levels.ts";
import { RightsError, whoIs } from "./refusal.ts";
import type { CountedThread, RunCap } from "./run-slots.ts";

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

/**
 * The paths that act on an existing thread, and whether each is held to the thread's current
 * runtime mode (CONTRACT.md "Trust round three"): a path that puts the caller's words or choices
 * into the thread's next run is; one that only organises or stops the thread is not. One table,
 * so a new path is decided here, once (an unlisted one is held).
 */
export const THREAD_PATHS = {
	dispatch: true, // continuation, steer, restart, fork
	answer: true, // t3_answer with answers (free text goes into the run)
	edit_queued: true,
	promote_queued: true,
	reorder_queued: true,
	resume_queue: true,
	retry_preparation: true,
	decision: false, // approvals keep the approve rule
	dismiss: false,
	rename: false,
	archive: false,
	unarchive: false,
	settle: false,
	unsettle: false,
	stop_session: false,
	cancel_queued: false,
	pin: false,
	unpin: false,
	snooze: false,
	unsnooze: false,
	mark_unread: false,
	interrupt: false,
} as const satisfies Record<string, boolean>;
export type ThreadPath = keyof typeof THREAD_PATHS;

/**
 * Refuses (before anything is sent) a path held to the mode when the thread runs above the
 * client's level; a dispatch's explicit `runtime_mode` within the level lowers the thread first,
 * so that is what is judged. A thread whose mode is unknown counts as full-access.
 */
export function checkThreadPath(
	client: ClientConfig | undefined,
	path: ThreadPath,
	threadId: string,
	current: string | undefined,
	asked?: string,
): void {
	if (!client) return;
	if (!THREAD_PATHS[path]) return;
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
			path === "dispatch"
				? `thread "${threadId}" runs at "${mode}", above this client's level (pass a runtime_mode within it to lower the thread first)`
				: `${path.replaceAll("_", " ")} on thread "${threadId}" would act on a run at "${mode}", above this client's level`,
		);
}

/** The client's `max_active_runs` as a cap on its busy threads (run-slots.ts), or null. */
export function clientCap(
	client: ClientConfig | undefined,
	threads: () => Iterable<CountedThread>,
): RunCap | null {
	const cap = client?.maxActiveRuns ?? null;
	if (client === undefined || cap === null) return null;
	return {
		key: `client:${client.name}`,
		cap,
		threads,
		refuse: (holding) =>
			new RightsError(
				"max_active_runs_reached",
				`${whoIs(client)} may have ${cap} run${cap === 1 ? "" : "s"} going or queued at once (max_active_runs), and ${holding.length === 0 ? "none may start" : `its threads ${holding.join(", ")} hold ${holding.length === 1 ? "it" : "them"}`}. Wait for one to finish (t3_wait) or stop it (t3_interrupt), then dispatch again.`,
			),
	};
}
