/**
 * A dispatch's record: the thread (origin, watched), the exact command and the key's claim,
 * written in one transaction before the command is sent.
 */
import { DEFAULT_CLIENT } from "../../config/clients.ts";
import type { FleetMachine } from "../../fleet/fleet.ts";
import type { DispatchRecord } from "../../store/dispatches.ts";
import type { ProjectShell } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { type Claim, TOOL } from "./claim.ts";

/**
 * Records the thread (origin, watched) and the exact command in one transaction, before the
 * command is sent: a crash after this point still knows which run to wait for.
 */
export function recordDispatch(
	deps: ThreadDeps,
	d: DispatchToRecord,
): DispatchRecord {
	deps.slot?.bind(d.threadId, d.entry.config.name, d.command.commandId);
	deps.db.transaction(() => writeRecord(deps, d))();
	return deps.dispatches.byMessageId(d.messageId) as DispatchRecord;
}

/**
 * The same, written through a group commit (a held dispatch starting: the drain starts many at
 * once, and each FULL commit would block the event loop for an fsync); resolves once on disk.
 */
export async function recordDispatchBatched(
	deps: ThreadDeps,
	d: DispatchToRecord,
	commit: <T>(write: () => T) => Promise<T>,
): Promise<DispatchRecord> {
	deps.slot?.bind(d.threadId, d.entry.config.name, d.command.commandId);
	await commit(() => writeRecord(deps, d));
	return deps.dispatches.byMessageId(d.messageId) as DispatchRecord;
}

export interface DispatchToRecord {
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
}

/** The record's writes (one transaction's body). */
function writeRecord(deps: ThreadDeps, d: DispatchToRecord): void {
	const now = deps.now();
	const machine = d.entry.config.name;

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
		client: deps.client?.name ?? DEFAULT_CLIENT,
	});
	if (d.baseline !== undefined)
		deps.threads.setBaseline(d.threadId, d.baseline);
	// A held dispatch starting: its machine and launch commandId, before anything is sent.
	deps.heldStart?.recorded(d.command.commandId, machine);
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
			throw Object.assign(new Error(`${TOOL}: key "${d.claim.key}" moved on`), {
				code: "SQLITE_CONSTRAINT_MOVED",
			});
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
}
