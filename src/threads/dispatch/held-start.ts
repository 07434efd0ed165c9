/**
 * Starting a held dispatch (CONTRACT.md "One pool", "Holding"), for the pool's drain: placed and
 * its slot taken synchronously (the drain starts the next one right after), checked again against
 * its client's current level, reach and caps, then launched with the thread id it answered with.
 * The record (dispatch + held row marked starting with machine and commandId) is written before
 * anything is sent; a row left starting (a restart, a send never confirmed) is replayed to that
 * machine only, with the very same command: T3 answers a repeated commandId with the original
 * thread, so it starts exactly once.
 */

import { machineCap } from "../../pool/capacity.ts";
import type { StartTry } from "../../pool/drain.ts";
import type { Holding } from "../../pool/hold.ts";
import { skippedOf } from "../../pool/placement.ts";
import { newThreadMode } from "../../rights/run-limits.ts";
import type { RunSlot } from "../../rights/run-slots.ts";
import { slotsOf } from "../../rights/run-slots.ts";
import type { HeldHead } from "../../store/held-store.ts";
import { findRunByMessageId } from "../../t3/derive/derive.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { projectRef } from "../shapes.ts";
import { TOOL } from "./claim.ts";
import { type DispatchArgs, takeSlot } from "./dispatch.ts";
import { HELD_REF } from "./hold-dispatch.ts";
import { launch } from "./launch.ts";

/** Test hooks: in-process fault points around the record and the send (never set in production). */
export interface StartFaults {
	/** After the record's transaction, before the launch is sent. */
	afterRecord?(threadId: string): void | Promise<void>;
	/** After the launch was confirmed, before the row is marked started. */
	afterSend?(threadId: string): void | Promise<void>;
}

export interface HeldStarterOptions {
	/** The server's own deps (the whole fleet, the holding, the ledger). */
	base: ThreadDeps;
	/** A client's deps as it is configured now; undefined when it is gone. */
	depsFor(client: string): ThreadDeps | undefined;
	faults?: StartFaults;
	/** The state file's group commit: a start's record goes through it (held-start records batch). */
	commit?<T>(write: () => T): Promise<T>;
}

/** A withdrawal that won the race against the record: nothing was sent. */
class Withdrawn extends Error {}

export function heldStarter(options: HeldStarterOptions) {
	const { base, faults } = options;
	const holding = base.holding as Holding;
	/** Starts between their slot and their record: several at once share one group commit. */
	let recording = 0;
	/**
	 * The record's write: alone, one FULL commit now (the lowest latency); with other starts
	 * recording too (the drain filling machines), one batch for all, synced off the event loop.
	 */
	const commit = <T>(write: () => T): Promise<T> =>
		recording > 1 && options.commit
			? options.commit(write)
			: Promise.resolve(base.db.transaction(write)());

	function tryStart(head: HeldHead): StartTry {
		const id = head.thread_id;
		const deps = options.depsFor(head.client);
		if (!deps)
			return {
				never: `its client "${head.client}" is no longer configured on this server`,
			};
		if (deps.client?.access === "read-only")
			return {
				never: `its client "${head.client}" is read-only now and may not start runs`,
			};
		const stored = JSON.parse(holding.args(id) ?? "{}") as DispatchArgs;
		const args: DispatchArgs = {
			...stored,
			machine: head.machine,
			project: head.project,
		};
		let taken: ReturnType<typeof takeSlot>;
		try {
			newThreadMode(deps.client, args.runtime_mode);
			taken = takeSlot(deps, args, true);
		} catch (error) {
			const code = (error as { code?: unknown }).code;
			if (code === "no_capacity")
				return { started: false, skipped: skippedOf(error) ?? [] };
			if (error instanceof ThreadError) return { never: error.message };
			throw error;
		}
		let recorded = false;
		recording += 1;
		let counted = true;
		const uncount = () => {
			if (counted) recording -= 1;
			counted = false;
		};
		const own: ThreadDeps = {
			...deps,
			slot: taken.slot,
			heldStart: {
				threadId: id,
				recorded(commandId, machine) {
					if (!holding.markStarting(id, machine, commandId))
						throw new Withdrawn();
					if (head.key !== null)
						deps.operations.moveRef(
							TOOL,
							head.key,
							`${HELD_REF}${id}`,
							commandId,
						);
					recorded = true;
				},
				...(faults?.afterRecord
					? { afterRecord: () => faults.afterRecord?.(id) }
					: {}),
				commit: (write) => commit(write).finally(uncount),
				later: (write) => {
					if (options.commit) options.commit(write).catch(() => {});
					else write();
				},
			},
		};
		const done = (async () => {
			try {
				const result = await launch(own, taken.args, head.origin, undefined);
				taken.slot.sent();
				await faults?.afterSend?.(id);
				holding.markStarted(id, {
					machine: result.machine as string,
					project: result.project as ReturnType<typeof projectRef>,
					runId: result.run_id,
					placement: taken.placement,
				});
			} catch (error) {
				uncount();
				taken.settle();
				if (error instanceof Withdrawn) return;
				if (!recorded) {
					// Nothing was sent: a machine that went away is tried again; anything else
					// (its model, its options) never will start.
					const machine = taken.args.machine
						? base.fleet.get(taken.args.machine)
						: undefined;
					const online = machine?.machine.status().state === "online";
					if (error instanceof ThreadError && online) {
						holding.markNeverStarted(id, error.message);
						return;
					}
					throw error;
				}
				// The record rolled back after all (nothing sent): held again.
				if (holding.storedStatus(id) === "held") {
					holding.unmarkStarting(id);
					throw error;
				}
				// Refused for good (send.ts forgot the dispatch): it never started.
				const commandId = holding.get(id)?.command_id;
				if (commandId && !base.dispatches.byCommandId(commandId)) {
					holding.markNeverStarted(id, (error as Error).message);
					return;
				}
				throw error;
			}
		})();
		return { started: true, done };
	}

	/** Sends a row's recorded launch again, to its machine only (null while it is not online). */
	function replay(head: HeldHead): Promise<unknown> | null {
		const id = head.thread_id;
		const entry = head.placed_machine
			? base.fleet.get(head.placed_machine)
			: undefined;
		const record = head.command_id
			? base.dispatches.byCommandId(head.command_id)
			: undefined;
		if (!record) {
			holding.markNeverStarted(
				id,
				"its launch was not recorded (or was refused); it never started",
			);
			return Promise.resolve();
		}
		if (!entry) {
			holding.markNeverStarted(
				id,
				`its machine "${head.placed_machine}" is no longer configured`,
			);
			return Promise.resolve();
		}
		if (entry.machine.status().state !== "online") return null;
		// Its slot again (it counted before the restart); a machine now full still gets it: the
		// launch may already be there.
		const ledger = base.slots ?? slotsOf(base.fleet, base.now);
		let slot: RunSlot | undefined;
		try {
			slot = ledger.take([machineCap(entry)], {
				threadId: id,
				machine: entry.config.name,
			});
			slot.bind(id, entry.config.name);
		} catch {
			slot = undefined;
		}
		const payload = JSON.parse(record.payload) as Record<string, unknown> & {
			commandId: string;
		};
		return (async () => {
			try {
				const result = await entry.machine.launchThread(payload);
				slot?.sent();
				await faults?.afterSend?.(id);
				const run = findRunByMessageId(result.projection, record.message_id);
				if (run) {
					const write = () =>
						base.dispatches.setRun(
							record.command_id,
							run.id,
							run.status,
							run.status === "queued",
						);
					if (options.commit) options.commit(write).catch(() => {});
					else write();
				}
				const project = base.fleet.project(
					entry,
					result.projection.thread.projectId,
				);
				holding.markStarted(id, {
					machine: entry.config.name,
					project: project
						? projectRef(project)
						: {
								id: result.projection.thread.projectId,
								title: "",
								path: "",
							},
					runId: run?.id ?? null,
					placement: null,
				});
			} catch (error) {
				slot?.release();
				if (
					error instanceof T3Error &&
					(error.code === "REJECTED" || error.code === "DEFECT") &&
					!error.detail?.retried
				) {
					holding.markNeverStarted(
						id,
						`Machine "${entry.config.name}" refused the launch: ${error.message}`,
					);
					return;
				}
				throw error;
			}
		})();
	}

	return { tryStart, replay };
}
