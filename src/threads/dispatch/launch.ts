/**
 * `t3_dispatch` without `thread_id`: a new thread (`orchestration.launchThread`) on the given
 * machine and project, with the prompt as its first message. Ids are minted here and recorded
 * with the command before it is sent.
 */
import { newThreadMode } from "../../rights/run-limits.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import {
	chooseModel,
	requireOnline,
	resolveMachine,
	resolveProject,
} from "../resolve.ts";
import { titleFromPrompt } from "../shapes.ts";
import { checkAttachments, persistAttachments } from "./attachments.ts";
import { claimFor } from "./claim.ts";
import type { DispatchArgs } from "./dispatch.ts";
import { finish } from "./finish.ts";
import { checkSelection } from "./model-catalog.ts";
import {
	type DispatchToRecord,
	recordDispatch,
	recordDispatchBatched,
} from "./record.ts";
import { send } from "./send.ts";
import { workspaceStrategy as strategyFor } from "./workspace.ts";

export async function launch(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
	key: string | undefined,
) {
	if (args.machine === undefined) {
		throw new ThreadError(
			`machine: required to start a new thread (one of: ${deps.fleet.names().join(", ")}). Pass thread_id instead to continue an existing thread.`,
		);
	}
	if (args.project === undefined) {
		throw new ThreadError(
			"project: required to start a new thread (a project id, title or path; see t3_projects).",
		);
	}
	const entry = resolveMachine(deps, args.machine);
	await requireOnline(entry);
	const project = resolveProject(deps, entry, args.project);
	// A held dispatch keeps the thread id it answered with (CONTRACT.md "One pool").
	const threadId = deps.heldStart?.threadId ?? deps.newId();
	const workspaceStrategy = strategyFor(
		args,
		project,
		entry.machine.threads(),
		threadId,
	);
	const modelSelection = await checkSelection(
		deps,
		entry,
		chooseModel(entry, args.model, project, undefined),
		args,
	);
	if (!modelSelection) {
		throw new ThreadError(
			`model: no model to use on machine "${entry.config.name}": pass model ("<providerInstance>/<model>") or set model in its config.`,
		);
	}
	const messageId = deps.newId();
	// Without a title T3 generates one from the prompt where it can; the prefix stays meanwhile
	// (and on a server that ignores generateTitle).
	const title = args.title?.trim() || titleFromPrompt(args.prompt);
	const attachments = await persistAttachments(
		entry,
		threadId,
		messageId,
		checkAttachments(args.attachments),
	);
	const input = {
		commandId: deps.newId(),
		creationSource: "mcp",
		threadId,
		projectId: project.id,
		title,
		modelSelection,
		runtimeMode: newThreadMode(deps.client, args.runtime_mode),
		interactionMode: args.interaction_mode ?? "default",
		...(args.title?.trim() ? {} : { generateTitle: true }),
		workspaceStrategy,
		initialMessage: { messageId, text: args.prompt, attachments },
	};
	const watched = args.watch ?? true;
	const toRecord: DispatchToRecord = {
		entry,
		threadId,
		project,
		title,
		origin,
		watched,
		kind: "launch",
		messageId,
		claim: claimFor(args, key, project.id),
		command: input,
		baseline: undefined,
	};
	// A held dispatch starting goes through the group commit (the drain starts many at once).
	const batch = deps.heldStart?.commit;
	const record = batch
		? await recordDispatchBatched(deps, toRecord, batch)
		: recordDispatch(deps, toRecord);
	await deps.heldStart?.afterRecord?.();
	const projection = await send(deps, entry, record, () =>
		deps.threads.remove(threadId),
	);
	return finish(deps, entry, record, project, projection, watched);
}
