/**
 * A `t3_dispatch` key used before: the same arguments (project compared by id) re-send the
 * stored command if it was never confirmed, or re-read the thread if it was; a keyed fork picks
 * up its earlier fork. Anything else is refused (`checkReuse`).
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { DispatchRecord } from "../../store/dispatches.ts";
import type { ProjectShell, ThreadProjection } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { requireOnline, resolveMachine } from "../resolve.ts";
import { isNotFound, knownGone } from "../wait/vanish.ts";
import { FORK_REF, FORKED_REF, operationArgs, TOOL } from "./claim.ts";
import type { DispatchArgs, DispatchResult } from "./dispatch.ts";
import { finish } from "./finish.ts";
import { dispatchFork, forkMachine } from "./fork-dispatch.ts";
import { HELD_REF, heldResult } from "./hold-dispatch.ts";
import {
	checkReuse,
	fingerprint,
	goneKeyError,
	hiddenKeyError,
} from "./idempotency.ts";
import { send } from "./send.ts";

/**
 * A key used before: the same arguments (project compared by id) re-send or re-read the earlier
 * dispatch; anything else is refused by `checkReuse`.
 */
export async function reuse(
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
	// Held (or withdrawn, or never started): answered from the held row.
	if (earlier?.ref?.startsWith(HELD_REF) && earlier.thread_id) {
		const head = deps.holding?.get(earlier.thread_id);
		if (!head)
			throw new ThreadError(
				`${keyed.name} "${keyed.key}": the earlier dispatch with this key is no longer recorded. Use a new key.`,
			);
		return heldResult(deps, head);
	}
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
export async function projectId(
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
