/**
 * `t3_dispatch` with `thread_id`: a follow-up run in an existing thread (`message.dispatch`),
 * where the thread is and with its modes unless asked; a steer or restart goes to the server
 * when it resolves them itself.
 */

import type { FleetMachine } from "../../fleet/fleet.ts";
import { checkThreadPath } from "../../rights/run-limits.ts";
import { settledOrdinal } from "../../t3/derive/derive.ts";
import {
	BUSY_RUN_STATUSES,
	type ModelSelection,
	type ThreadProjection,
} from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { locateThread, readDetail } from "../locate.ts";
import { chooseModel, requireOnline, requireThreadPlace } from "../resolve.ts";
import { checkAttachments, persistAttachments } from "./attachments.ts";
import { type Claim, claimFor } from "./claim.ts";
import type { DispatchArgs } from "./dispatch.ts";
import { finish } from "./finish.ts";
import { checkSelection } from "./model-catalog.ts";
import { recordDispatch } from "./record.ts";
import { send } from "./send.ts";
import { type DispatchMode, modeCommands, planDelivery } from "./settings.ts";
import { refuseWorkspaceArgs } from "./workspace.ts";

export async function continueThread(
	deps: ThreadDeps,
	args: DispatchArgs,
	threadId: string,
	origin: string | null,
	key: string | undefined,
	/** The claim when it differs from `args`' own (a fork's). */
	claimed?: Claim,
) {
	refuseWorkspaceArgs(
		args,
		`a continuation runs where its thread is (thread "${threadId}" keeps its branch and worktree). To work elsewhere, start a new thread (omit thread_id) or fork it (fork_of).`,
	);
	const located = await locateThread(deps, threadId);
	const { entry, project } = located;
	requireThreadPlace(args, located, threadId, "thread_id");
	await requireOnline(entry);
	const { projection } = await readDetail(located, true);
	const thread = located.shell ?? projection.thread;
	checkThreadPath(
		deps.client,
		"dispatch",
		threadId,
		projection.thread.runtimeMode ?? thread.runtimeMode,
		args.runtime_mode,
	);
	// The model in effect: the given one, else the thread's current one (options and plan
	// mode are checked against it); it is sent only when the caller changes it.
	const current = thread.modelSelection ?? projection.thread.modelSelection;
	const selection = await checkSelection(
		deps,
		entry,
		args.model !== undefined || !current
			? chooseModel(entry, args.model, project, current)
			: { instanceId: current.instanceId, model: current.model },
		args,
	);
	const messageId = deps.newId();
	// Stored before any mode change is sent: a server without attachments gets nothing.
	const attachments = await persistAttachments(
		entry,
		threadId,
		messageId,
		checkAttachments(args.attachments),
	);
	// A continuation keeps the thread's modes unless asked: never raised silently.
	// Compared with the fresh projection: the shell may lag a mode change made moments ago.
	for (const command of modeCommands(
		{ ...thread, ...projection.thread, id: threadId },
		args,
		deps.newId,
	))
		await entry.machine.dispatch(command);
	const plan = planDelivery(
		args.mode,
		projection,
		await serverTakesIntent(entry, args.mode, projection),
	);
	const command: Record<string, unknown> & { type: string; commandId: string } =
		{
			type: "message.dispatch",
			commandId: deps.newId(),
			threadId,
			messageId,
			text: args.prompt,
			attachments,
			createdBy: "user",
			creationSource: "mcp",
			...(plan.deliveryIntent ? { deliveryIntent: plan.deliveryIntent } : {}),
			dispatchMode: plan.dispatchMode,
		};
	if (args.model !== undefined || args.options !== undefined)
		command.modelSelection = selection as ModelSelection;
	const watched = args.watch ?? true;
	const known = deps.threads.get(threadId);
	// Runs that finished before we tracked (or while we did not watch) this thread never
	// produce events: only what this dispatch starts, and what is still going, reports.
	const baseline =
		known?.watched === 1
			? undefined
			: Math.max(known?.baseline_ordinal ?? 0, settledOrdinal(projection));
	const record = recordDispatch(deps, {
		entry,
		threadId,
		project,
		title: args.title?.trim() || thread.title,
		origin,
		watched,
		kind: "message",
		messageId,
		claim:
			claimed !== undefined && key !== undefined
				? claimed
				: claimFor(args, key, project.id),
		command,
		baseline,
	});
	// A refused follow-up must not take the thread's events over: put back what was there.
	const after = await send(
		deps,
		entry,
		record,
		() =>
			known
				? deps.threads.setWatched(
						threadId,
						known.watched === 1,
						known.origin,
						deps.now(),
					)
				: deps.threads.remove(threadId),
		claimed,
	);
	return finish(deps, entry, record, project, after, watched, projection);
}

/**
 * Whether to let the server resolve a steer or restart (`deliveryIntent`): only when it is
 * asked for on a busy thread, and only as far as the server says (its descriptor's flag, else
 * its answer to the probe). A probe that decided nothing falls back to the explicit modes.
 */
async function serverTakesIntent(
	entry: FleetMachine,
	mode: DispatchMode | undefined,
	projection: ThreadProjection,
): Promise<boolean> {
	if (mode !== "steer" && mode !== "restart") return false;
	if (!projection.runs.some((r) => BUSY_RUN_STATUSES.has(r.status)))
		return false;
	try {
		return (await entry.machine.deliveryIntent?.()) ?? false;
	} catch {
		return false;
	}
}
