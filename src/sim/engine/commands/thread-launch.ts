/**
 * `orchestration.launchThread` (PROTOCOL.md §5.2): resolve the project, create (or reuse) the
 * thread in its workspace, start its first message and maybe title it, in one idempotent call;
 * a replayed commandId resumes the thread it launched. Each failing stage fails typed.
 */
import { simHas } from "../../compat.ts";
import { placeThread, refuseStrategy } from "../../repo/worktrees.ts";
import type { Outcome } from "../engine.ts";
import type { EngineCore } from "../engine-core.ts";
import { newId, type Row } from "../rows.ts";
import { startRun } from "../run-queue.ts";
import { isBusy, newThread, setApp } from "../thread-app.ts";
import { generatedTitle } from "../titles.ts";
import { LAUNCH_REQUIRED, missingKey } from "./command-schema.ts";
import { attachmentRefs } from "./message-dispatch.ts";

export function launchThread(
	core: EngineCore,
	input: Record<string, unknown>,
): Outcome {
	const { store, receipts } = core;
	const missing = missingKey(input, LAUNCH_REQUIRED);
	if (missing) return { die: missing };
	const commandId = String(input.commandId);
	const receipt = receipts.get(commandId);
	if (receipt?.launch) {
		if (!receipt.threadId) return receipt.outcome;
		const thread = store.threads.get(receipt.threadId);
		if (!thread) return receipt.outcome;
		return {
			ok: {
				threadId: thread.id,
				projection: store.projection(thread),
				resumed: true,
			},
		};
	}
	const projectId = String(input.projectId);
	const fail = (stage: string, cause: string): Outcome => {
		const message = `Thread launch ${commandId} failed during ${stage}.`;
		const outcome = {
			fail: {
				_tag: "OrchestrationV2ThreadLaunchError",
				commandId,
				projectId,
				message,
				cause: { name: "ThreadLaunchError", message, cause },
			},
		};
		receipts.set(commandId, { outcome, launch: true });
		return outcome;
	};
	if (!store.projects.has(projectId))
		return fail("resolve-project", "Project not found.");
	const requested =
		input.threadId === undefined ? undefined : String(input.threadId);
	let thread = requested ? store.threads.get(requested) : undefined;
	if (thread) {
		const empty = thread.rows.runs.length === 0 && !thread.app.deletedAt;
		if (!(input.reuseExistingThread === true && empty)) {
			return fail("create-thread", `Thread ${thread.id} already exists.`);
		}
	} else {
		const strategy = input.workspaceStrategy as
			| Record<string, unknown>
			| undefined;
		const refused = refuseStrategy(store, projectId, strategy);
		if (refused) return fail("prepare-workspace", refused);
		thread = newThread(store, input, String(input.creationSource ?? "web"));
		placeThread(store, thread, strategy);
	}
	const initial = input.initialMessage as Record<string, unknown> | undefined;
	if (initial && typeof initial.text === "string") {
		const attachments = attachmentRefs(core, initial.attachments);
		if (typeof attachments === "string")
			return fail("create-message", attachments);
		startRun(core, thread, {
			messageId: String(initial.messageId ?? newId()),
			text: initial.text,
			attachments,
			modelSelection: input.modelSelection as Row,
			createdBy: "user",
			creationSource: String(input.creationSource ?? "web"),
			status: isBusy(thread) ? "queued" : "preparing",
			inputIntent: "turn_start",
		});
		if (input.generateTitle === true && simHas(core.compat, "generateTitle")) {
			const title = generatedTitle(initial.text);
			const target = thread;
			core.scheduler.later(core.stepMs, () => {
				if (!target.app.deletedAt)
					setApp(store, target, { title }, "thread.metadata-updated");
			});
		}
	}
	const outcome: Outcome = {
		ok: {
			threadId: thread.id,
			projection: store.projection(thread),
			resumed: false,
		},
	};
	receipts.set(commandId, { outcome, threadId: thread.id, launch: true });
	return outcome;
}
