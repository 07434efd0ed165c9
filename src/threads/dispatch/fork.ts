/**
 * `t3_dispatch` `fork_of`: a new thread carrying the source thread's conversation up to one of
 * its runs (`fork_run_id`) or its latest stable point, through `thread.fork` (PROTOCOL.md §6.9,
 * RELEASED-0.1.md §3). The source is not changed. A server without the command (the
 * pre-release engine dies on it) is said plainly.
 */
import { forkOrigin } from "../../t3/derive/fork-origin.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadShell } from "../../t3/model.ts";
import { t3Reason } from "../control/manage.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import type { LocatedThread } from "../locate.ts";
import { requireOnline, requireThreadPlace } from "../resolve.ts";
import { isUnsupported, unsupportedError } from "../unsupported.ts";

interface ForkArgs {
	machine?: string;
	project?: string;
	title?: string;
	fork_of?: string;
	fork_run_id?: string;
}

/**
 * The fork's ids: minted here, or those of an earlier attempt (re-sent with the same commandId,
 * T3 forks once). `before` runs just before the command is sent (a keyed fork claims its key).
 */
export interface ForkAttempt {
	ids?: { targetId: string; commandId: string };
	before?: (projectId: string, targetId: string, commandId: string) => void;
}

/** Forks the source thread; returns the new thread's id and its project's. */
export async function forkThread(
	deps: ThreadDeps,
	args: ForkArgs,
	locate: (threadId: string) => Promise<LocatedThread>,
	attempt: ForkAttempt = {},
): Promise<{ targetId: string; projectId: string }> {
	const sourceId = args.fork_of as string;
	const located = await locate(sourceId);
	const { entry, project } = located;
	requireThreadPlace(args, located, sourceId, "fork_of");
	await requireOnline(entry);
	const targetId = attempt.ids?.targetId ?? deps.newId();
	const command = {
		type: "thread.fork",
		commandId: attempt.ids?.commandId ?? deps.newId(),
		createdBy: "user",
		creationSource: "mcp",
		sourceThreadId: sourceId,
		targetThreadId: targetId,
		sourcePoint:
			args.fork_run_id !== undefined
				? { type: "run", runId: args.fork_run_id }
				: { type: "latest_stable" },
		...(args.title?.trim() ? { title: args.title.trim() } : {}),
	};
	attempt.before?.(project.id, targetId, command.commandId);
	try {
		await entry.machine.dispatch(command);
	} catch (error) {
		if (isUnsupported(error))
			throw new ThreadError(
				`fork_of: ${
					unsupportedError(
						entry.config.name,
						"forking threads",
						"thread.fork",
						`start a new thread instead (t3_dispatch without fork_of), giving it what it needs from the source thread (t3_thread "${sourceId}").`,
					).message
				}`,
			);
		// A refusal after a re-send may answer a fork that happened: not a definite no.
		if (
			error instanceof T3Error &&
			error.code === "REJECTED" &&
			!error.detail?.retried
		)
			throw new ThreadError(
				`${args.fork_run_id !== undefined ? "fork_run_id" : "fork_of"}: machine "${entry.config.name}" refused to fork thread "${sourceId}": ${t3Reason(error)} ${args.fork_run_id !== undefined ? "Take a settled run's id from t3_thread runs[].id, or leave fork_run_id out to fork from the latest stable point." : ""}`.trimEnd(),
			);
		throw error;
	}
	return { targetId, projectId: project.id };
}

/** The thread a thread was forked from, as T3 reports it (`forkedFrom`, or lineage), or null. */
export function forkedFrom(thread: ThreadShell): string | null {
	return forkOrigin(thread)?.thread_id ?? null;
}
