/**
 * `t3_dispatch`: start a new thread (`orchestration.launchThread`) or a follow-up run in an
 * existing one (`message.dispatch`), and return at once. Ids are minted once and stored with
 * the exact command before it is sent, so every retry re-sends the same command.
 */

import type { FleetMachine } from "../../fleet/fleet.ts";
import type { DispatchRecord } from "../../store/dispatches.ts";
import { findRunByMessageId, settledOrdinal } from "../../t3/derive/derive.ts";
import { T3Error } from "../../t3/machine-api.ts";
import {
	BUSY_RUN_STATUSES,
	type ModelSelection,
	type ProjectShell,
	type ThreadProjection,
} from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { locateThread, readDetail } from "../locate.ts";
import {
	chooseModel,
	requireOnline,
	requireThreadPlace,
	resolveMachine,
	resolveProject,
} from "../resolve.ts";
import { type ProjectRef, projectRef, titleFromPrompt } from "../shapes.ts";
import { isNotFound, knownGone } from "../wait/vanish.ts";
import {
	type AttachmentArg,
	attachmentsClaim,
	checkAttachments,
	persistAttachments,
} from "./attachments.ts";
import { deliveredAs } from "./delivered-as.ts";
import { forkedFrom, forkThread } from "./fork.ts";
import {
	checkReuse,
	fingerprint,
	goneKeyError,
	hiddenKeyError,
	keyArgument,
} from "./idempotency.ts";
import { checkSelection } from "./model-catalog.ts";
import { checkPrompt } from "./prompt.ts";
import {
	type DispatchMode,
	type InteractionMode,
	modeCommands,
	planDelivery,
	type RuntimeMode,
} from "./settings.ts";
import {
	placeShape,
	refuseWorkspaceArgs,
	workspaceStrategy as strategyFor,
	type Workspace,
} from "./workspace.ts";

const TOOL = "t3_dispatch";

/** T3 refuses very long messages (about 120 000 characters); stay clearly below. */
export { PROMPT_LIMIT } from "./prompt.ts";

export interface DispatchArgs {
	machine?: string;
	project?: string;
	prompt: string;
	title?: string;
	model?: string;
	thread_id?: string;
	watch?: boolean;
	idempotency_key?: string;
	/** The older name of `idempotency_key`. */
	request_id?: string;
	mode?: DispatchMode;
	runtime_mode?: RuntimeMode;
	interaction_mode?: InteractionMode;
	options?: Record<string, string | boolean>;
	/** Where a new thread works (workspace.ts). */
	workspace?: Workspace;
	base_ref?: string;
	branch?: string;
	worktree_path?: string;
	/** Start the new thread as a fork of this one (fork.ts), up to `fork_run_id`. */
	fork_of?: string;
	fork_run_id?: string;
	/** Files sent with the message (attachments.ts). */
	attachments?: AttachmentArg[];
}

/** An idempotency key and the canonical arguments it is claimed with. */
interface Claim {
	key: string;
	args: string;
	/** A keyed fork's: the claim already exists and points at the fork (`FORK_REF`). */
	from?: string;
}

/**
 * What a keyed fork's claim points at until its message is recorded: the `thread.fork`
 * command. A retry then re-sends that fork (T3 forks once per commandId) and only the message.
 */
const FORK_REF = "thread.fork:";
/** The same, once T3 confirmed the fork: from then on a 404 for it means it was deleted. */
const FORKED_REF = "thread.forked:";

export type DispatchResult = {
	thread_id: string;
	machine: string;
	project: ProjectRef;
	run_id: string | null;
	run_status: string;
	queued: boolean;
	runtime_mode: string;
	watched: boolean;
	origin: string | null;
	/** What T3 did with the message: started a run, queued it, steered or restarted the run. */
	delivered_as: "started" | "queued" | "steered" | "restarted";
	/** The thread's branch (as asked or assigned) and worktree; null until T3 says. */
	branch: string | null;
	worktree_path: string | null;
	/** The thread this one was forked from, or null. */
	forked_from: string | null;
};

export async function dispatch(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
): Promise<DispatchResult> {
	checkPrompt(args.prompt);
	checkAttachments(args.attachments);
	const keyed = keyArgument(args);
	try {
		if (keyed && deps.operations.get(TOOL, keyed.key) !== undefined)
			return await reuse(deps, args, keyed, origin);
		if (args.fork_of !== undefined)
			return await dispatchFork(deps, args, origin, keyed?.key);
		if (args.fork_run_id !== undefined)
			throw new ThreadError(
				"fork_run_id: only used with fork_of (the run of the source thread to fork from).",
			);
		return await (args.thread_id === undefined
			? launch(deps, args, origin, keyed?.key)
			: continueThread(deps, args, args.thread_id, origin, keyed?.key));
	} catch (error) {
		// The same key in two calls at once: the second one to record it (or to move a fork's
		// claim on) answers like a retry of the first.
		const code = String((error as { code?: unknown })?.code ?? "");
		if (
			keyed &&
			code.startsWith("SQLITE_CONSTRAINT") &&
			deps.operations.get(TOOL, keyed.key) !== undefined
		) {
			return reuse(deps, args, keyed, origin);
		}
		throw error;
	}
}

/** Every argument except the key, with `project` as given (resolved later where it can be). */
function operationArgs(args: DispatchArgs): Record<string, unknown> {
	const { idempotency_key: _, request_id: __, ...rest } = args;
	return { ...rest, attachments: attachmentsClaim(args.attachments) };
}

/**
 * A key used before: the same arguments (project compared by id) re-send or re-read the earlier
 * dispatch; anything else is refused by `checkReuse`.
 */
async function reuse(
	deps: ThreadDeps,
	args: DispatchArgs,
	keyed: { key: string; name: string },
	origin: string | null,
): Promise<DispatchResult> {
	// Refused before resolving anything, so not even the kind of mismatch tells about it.
	if (deps.operations.get(TOOL, keyed.key) === "hidden")
		throw hiddenKeyError(keyed.name, keyed.key);
	const resolved = operationArgs(args);
	if (typeof resolved.project === "string")
		resolved.project = await projectId(deps, args, resolved.project);
	const earlier = checkReuse(
		deps,
		TOOL,
		keyed.key,
		fingerprint(resolved),
		keyed.name,
	);
	const forkRef = [FORKED_REF, FORK_REF].find((r) =>
		earlier?.ref?.startsWith(r),
	);
	if (forkRef && earlier?.ref && earlier.thread_id) {
		const targetId = earlier.thread_id;
		// A confirmed fork T3 no longer has was deleted: refused before anything is sent.
		if (
			forkRef === FORKED_REF &&
			(await knownGone(deps, targetId, forkMachine(deps, args)))
		)
			throw goneKeyError(keyed.name, keyed.key, targetId);
		return dispatchFork(deps, args, origin, keyed.key, {
			targetId,
			commandId: earlier.ref.slice(forkRef.length),
			ref: earlier.ref,
			keyName: keyed.name,
		});
	}
	const record = earlier?.ref
		? deps.dispatches.byCommandId(earlier.ref)
		: undefined;
	if (!record) {
		throw new ThreadError(
			`${keyed.name} "${keyed.key}": the earlier dispatch with this key is no longer recorded. Use a new key.`,
		);
	}
	return replay(deps, record, keyed);
}

/** A project reference as its id, when it names exactly one allowed project; else as given. */
async function projectId(
	deps: ThreadDeps,
	args: DispatchArgs,
	ref: string,
): Promise<string> {
	const name =
		args.machine ??
		(args.thread_id ? deps.threads.get(args.thread_id)?.machine : undefined);
	const entry = name === undefined ? undefined : deps.fleet.get(name);
	if (!entry) return ref;
	if (entry.machine.status().state === "connecting")
		await entry.machine.ready(5_000).catch(() => {});
	const matches = deps.fleet
		.projects(entry)
		.filter((p) => p.id === ref || p.title === ref || p.workspaceRoot === ref);
	return matches.length === 1 ? (matches[0] as ProjectShell).id : ref;
}

/** The claim a keyed dispatch records, its project resolved to `projectId`. */
function claimFor(
	args: DispatchArgs,
	key: string | undefined,
	projectId: string,
): Claim | undefined {
	if (key === undefined) return undefined;
	const resolved = operationArgs(args);
	if (resolved.project !== undefined) resolved.project = projectId;
	return { key, args: fingerprint(resolved) };
}

async function launch(
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
	const workspaceStrategy = strategyFor(args, project, entry.machine.threads());
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
	const threadId = deps.newId();
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
		runtimeMode: args.runtime_mode ?? "full-access",
		interactionMode: args.interaction_mode ?? "default",
		...(args.title?.trim() ? {} : { generateTitle: true }),
		workspaceStrategy,
		initialMessage: { messageId, text: args.prompt, attachments },
	};
	const watched = args.watch ?? true;
	const record = recordDispatch(deps, {
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
	});
	const projection = await send(deps, entry, record, () =>
		deps.threads.remove(threadId),
	);
	return finish(deps, entry, record, project, projection, watched);
}

/**
 * A fork: `thread.fork` makes the new thread (fork.ts), then the prompt runs in it as a
 * continuation would. The key claims the arguments as given (with fork_of, not the new id),
 * before the fork is sent: a retry after a failure between the fork and the message re-sends
 * that same fork (`pending`) and only then the message, so one key never makes two forks.
 */
async function dispatchFork(
	deps: ThreadDeps,
	args: DispatchArgs,
	origin: string | null,
	key: string | undefined,
	/** An earlier attempt's: its ids, the claim's current ref, the key's argument name. */
	pending?: {
		targetId: string;
		commandId: string;
		ref: string;
		keyName: string;
	},
): Promise<DispatchResult> {
	if (args.thread_id !== undefined)
		throw new ThreadError(
			"fork_of: not used with thread_id (a fork is a new thread). Pass one of them.",
		);
	refuseWorkspaceArgs(
		args,
		"a fork works where its source thread does (its branch and worktree).",
	);
	const source = (fork_of: string) => locateThread(deps, fork_of);
	let claim: Claim | undefined;
	const forked = await forkThread(deps, args, source, {
		ids: pending,
		before: (projectId, targetId, commandId) => {
			const fresh = claimFor(args, key, projectId);
			if (!fresh) return;
			const from = pending?.ref ?? FORK_REF + commandId;
			if (!pending)
				deps.operations.insert({
					tool: TOOL,
					key: fresh.key,
					args: fresh.args,
					thread_id: targetId,
					ref: from,
					created_at: deps.now(),
				});
			claim = { ...fresh, from };
		},
	}).catch((error: unknown) => {
		if (!claim?.from) throw error;
		// Refused: nothing was forked, so the key is free again and a retry forks once.
		if (error instanceof ThreadError) {
			deps.operations.removeRef(TOOL, claim.from);
			throw error;
		}
		if (error instanceof T3Error)
			throw new ThreadError(
				`fork_of: the machine did not confirm forking thread "${args.fork_of}" (${error.message}). The fork may have been made: call t3_dispatch again with the same idempotency_key to finish it safely (the same fork, never a second one).`,
			);
		throw error;
	});
	if (claim?.from?.startsWith(FORK_REF)) {
		// Confirmed: a retry that finds it gone knows it was deleted (see `reuse`).
		const confirmed = FORKED_REF + claim.from.slice(FORK_REF.length);
		if (deps.operations.moveRef(TOOL, claim.key, claim.from, confirmed))
			claim.from = confirmed;
	}
	// A re-sent fork T3 took (it forks once per commandId) yet does not have: deleted.
	if (
		pending &&
		claim &&
		(await knownGone(deps, forked.targetId, forkMachine(deps, args)))
	)
		throw goneKeyError(pending.keyName, claim.key, forked.targetId);
	const { fork_of: _, fork_run_id: __, title: ___, ...rest } = args;
	const result = await continueThread(
		deps,
		{ ...rest, machine: undefined, project: undefined },
		forked.targetId,
		origin,
		key,
		claim ?? claimFor(args, key, forked.projectId),
	);
	return { ...result, forked_from: args.fork_of ?? null };
}

/** The machine a fork lives on (its source's), when the shells say; else undefined. */
function forkMachine(deps: ThreadDeps, args: DispatchArgs): string | undefined {
	return args.fork_of === undefined
		? undefined
		: deps.fleet.locate(args.fork_of)?.entry.config.name;
}

async function continueThread(
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
 * asked for on a busy thread, and only as far as the server's answer to the probe says.
 * A probe that decided nothing falls back to the explicit modes for this dispatch.
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

/**
 * Records the thread (origin, watched) and the exact command in one transaction, before the
 * command is sent: a crash after this point still knows which run to wait for.
 */
function recordDispatch(
	deps: ThreadDeps,
	d: {
		entry: FleetMachine;
		threadId: string;
		project: ProjectShell;
		title: string;
		origin: string | null;
		watched: boolean;
		kind: DispatchRecord["kind"];
		messageId: string;
		claim: Claim | undefined;
		command: { commandId: string };
		baseline: number | undefined;
	},
): DispatchRecord {
	const now = deps.now();
	const machine = d.entry.config.name;
	deps.db.transaction(() => {
		deps.threads.upsert({
			threadId: d.threadId,
			machine,
			projectId: d.project.id,
			projectTitle: d.project.title,
			projectPath: d.project.workspaceRoot,
			title: d.title,
			origin: d.origin,
			watched: d.watched,
			now,
		});
		if (d.baseline !== undefined)
			deps.threads.setBaseline(d.threadId, d.baseline);
		deps.dispatches.insert({
			command_id: d.command.commandId,
			thread_id: d.threadId,
			machine,
			kind: d.kind,
			message_id: d.messageId,
			origin: d.origin,
			payload: JSON.stringify(d.command),
			created_at: now,
		});
		if (d.claim?.from !== undefined) {
			// A fork's claim moves from the fork to this message, unless a call with the
			// same key got there first (then this one answers like its retry).
			if (
				!deps.operations.moveRef(
					TOOL,
					d.claim.key,
					d.claim.from,
					d.command.commandId,
				)
			)
				throw Object.assign(
					new Error(`${TOOL}: key "${d.claim.key}" moved on`),
					{ code: "SQLITE_CONSTRAINT_MOVED" },
				);
		} else if (d.claim) {
			deps.operations.insert({
				tool: TOOL,
				key: d.claim.key,
				args: d.claim.args,
				thread_id: d.threadId,
				ref: d.command.commandId,
				created_at: now,
			});
		}
	})();
	return deps.dispatches.byMessageId(d.messageId) as DispatchRecord;
}

/** A client retry with a known key: re-send the stored command if it was never confirmed. */
async function replay(
	deps: ThreadDeps,
	record: DispatchRecord,
	keyed: { key: string; name: string },
): Promise<DispatchResult> {
	const entry = resolveMachine(deps, record.machine);
	await requireOnline(entry);
	// Confirmed before: read the thread; never confirmed: re-send the very same command.
	const projection =
		record.run_id !== null
			? await confirmedThread(entry, record.thread_id, keyed)
			: await send(deps, entry, record, undefined);
	const thread = deps.threads.get(record.thread_id);
	const project =
		deps.fleet.project(entry, projection.thread.projectId) ??
		({
			id: projection.thread.projectId,
			title: "",
			workspaceRoot: "",
			defaultModelSelection: null,
		} as ProjectShell);
	return finish(
		deps,
		entry,
		record,
		project,
		projection,
		thread ? thread.watched === 1 : true,
	);
}

/** A thread T3 confirmed before; one it no longer has was deleted, and the key stays its. */
async function confirmedThread(
	entry: FleetMachine,
	threadId: string,
	keyed: { key: string; name: string },
): Promise<ThreadProjection> {
	const { projection } = await entry.machine
		.getThread(threadId)
		.catch((error: unknown) => {
			throw isNotFound(error)
				? goneKeyError(keyed.name, keyed.key, threadId)
				: error;
		});
	if (projection.thread.deletedAt)
		throw goneKeyError(keyed.name, keyed.key, threadId);
	return projection;
}

/**
 * Sends the stored command (the machine re-sends it with the same commandId over transport
 * failures) and returns the thread's projection afterwards. A definite rejection of a first
 * attempt forgets the dispatch and runs `undo` (in the same transaction), so the client may
 * retry with corrected arguments and nothing half-written stays behind. A fork's key goes back
 * to its fork (`fork.from`): the fork exists, and a retry sends only the message.
 */
async function send(
	deps: ThreadDeps,
	entry: FleetMachine,
	record: DispatchRecord,
	undo: (() => void) | undefined,
	fork?: Claim,
): Promise<ThreadProjection> {
	const payload = JSON.parse(record.payload) as Record<string, unknown> & {
		commandId: string;
		type: string;
	};
	try {
		if (record.kind === "launch") {
			const result = await entry.machine.launchThread(payload);
			return result.projection;
		}
		await entry.machine.dispatch(payload);
		return (await entry.machine.getThread(record.thread_id)).projection;
	} catch (error) {
		if (
			error instanceof T3Error &&
			(error.code === "REJECTED" || error.code === "DEFECT") &&
			!error.detail?.retried
		) {
			if (undo) {
				deps.db.transaction(() => {
					deps.dispatches.remove(record.command_id);
					if (fork?.from)
						deps.operations.moveRef(
							TOOL,
							fork.key,
							record.command_id,
							fork.from,
						);
					else deps.operations.removeRef(TOOL, record.command_id);
					undo();
				})();
			}
			throw new ThreadError(
				`Machine "${entry.config.name}" refused the dispatch: ${error.message}`,
			);
		}
		if (error instanceof T3Error) {
			throw new ThreadError(
				`Machine "${entry.config.name}" did not confirm the dispatch (${error.message}). It may still run: call t3_dispatch again with the same idempotency_key to re-send the same command safely, or check t3_thread "${record.thread_id}".`,
			);
		}
		throw error;
	}
}

function finish(
	deps: ThreadDeps,
	entry: FleetMachine,
	record: DispatchRecord,
	project: ProjectShell,
	projection: ThreadProjection,
	watched: boolean,
	before?: ThreadProjection,
): DispatchResult {
	const run = findRunByMessageId(projection, record.message_id);
	if (run)
		deps.dispatches.setRun(
			record.command_id,
			run.id,
			run.status,
			run.status === "queued",
		);
	return {
		thread_id: record.thread_id,
		machine: entry.config.name,
		project: projectRef(project),
		run_id: run?.id ?? null,
		run_status: run?.status ?? "pending",
		queued: run?.status === "queued",
		runtime_mode: projection.thread.runtimeMode ?? "full-access",
		watched,
		origin: record.origin,
		delivered_as: deliveredAs(
			JSON.parse(record.payload) as Record<string, unknown>,
			record.message_id,
			run ?? null,
			projection,
			before,
		),
		...placeShape({
			...projection.thread,
			branch: projection.thread.branch ?? requestedBranch(record),
		}),
		forked_from: forkedFrom(projection.thread),
	};
}

/** The branch a launch asked for, until T3 reports the thread's. */
function requestedBranch(record: DispatchRecord): string | undefined {
	const payload = JSON.parse(record.payload) as {
		workspaceStrategy?: { branch?: unknown };
	};
	const branch = payload.workspaceStrategy?.branch;
	return typeof branch === "string" ? branch : undefined;
}
