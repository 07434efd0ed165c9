/**
 * `t3_dispatch`: start a thread (or a follow-up run in one) and return at once, or with
 * `wait: true` also wait for that run as `t3_wait` does (a task where the client has Tasks).
 */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import {
	ATTACHMENT_NAME_MAX,
	ATTACHMENTS_MAX,
} from "../../threads/dispatch/attachments.ts";
import {
	type DispatchResult,
	dispatch,
	PROMPT_LIMIT,
} from "../../threads/dispatch/dispatch.ts";
import { REF_MAX } from "../../threads/dispatch/workspace.ts";
import { waitForThreads } from "../../threads/wait/wait.ts";
import {
	HELD_REASONS,
	heldProjectRefSchema,
	heldSchema,
	ID_MAX,
	keyArg,
	PATH_MAX,
	segmentIdArg,
	titleArg,
	toolInput,
} from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { waitOutputSchema } from "./t3-wait.ts";
import { dispatchWaitResult, settledAtOnce } from "./wait-results.ts";

const HELD_NOTE =
	"No machine can take this dispatch now: the server holds it and starts it when one has room (oldest first). Its thread_id is final. t3_wait waits through the hold; t3_interrupt withdraws it.";

const QUEUED_NOTE =
	"The thread was busy: this message is queued and runs after the active run. t3_wait reports this run.";

export const t3Dispatch = defineTool({
	name: "t3_dispatch",
	title: "Start a T3 coding run",
	description:
		'Start a coding agent run on a T3 Code machine and return at once with its thread_id (it does not wait for the run). Without thread_id it creates a new thread in `project` on `machine` (find them with t3_machines and t3_projects); with thread_id it sends a follow-up message to that existing thread (machine/project may then be omitted). `mode` says what a follow-up does while a run is still going: queue (default, runs after it), steer (joins the running run) or restart (interrupts it and starts over with this message); the result\'s `queued` is true when the message waits its turn, and `delivered_as` says what T3 did (started, queued, steered, restarted). Steer works on every provider: one that cannot join a running turn is steered by restarting it (t3_models `steer` says how each steers). A new thread runs at your client\'s access level (full access when the server has no clients; t3_machines shows yours) unless runtime_mode says otherwise, never above it; a follow-up keeps the thread\'s mode unless you pass runtime_mode. Pick another model, plan mode or model options with model / interaction_mode / options, as t3_models lists them for the machine. Then call t3_wait with the thread_id to get the outcome (completed, failed, interrupted, or a question to answer with t3_answer), or pass wait: true to do both in one call (a task with MCP Tasks: you are woken when the run settles or asks). Pass idempotency_key to make a retry of this call safe: the same key with the same arguments never starts a second run. For several threads working in one project at the same time, pass workspace: "worktree": each gets its own worktree and branch (t3_diff shows each one\'s changes alone). fork_of starts a new thread from another thread\'s conversation. attachments sends files (a screenshot, a log) with the message, up to 3 MiB together. With machine as a pattern ("*") or not_before, a new thread that cannot start now is held by the server (run_status "held", its final thread_id, held {position, reason}) and started when a machine has room, oldest first; t3_wait waits through the hold, t3_interrupt withdraws it.',
	inputSchema: toolInput({
		machine: z
			.string()
			.min(1)
			.max(ID_MAX)
			.optional()
			.describe(
				'Machine name from t3_machines, or for a new thread an fnmatch pattern ("*" = every machine you reach, "linux-*") to let the server place it on the machine with room: online, with the project, the model\'s provider ready, below its max_active_runs and yours, no usage window of that provider used up; then the fewest busy threads, the lowest usage, config order. The result\'s placement says where and why. Required for a new thread.',
			),
		project: z
			.string()
			.min(1)
			.max(PATH_MAX)
			.optional()
			.describe(
				"Project id, title or workspace path from t3_projects. Required for a new thread.",
			),
		// The limit is counted in code points, so it is only advertised here (zod's max counts
		// UTF-16 units); dispatch() enforces it.
		prompt: z
			.string()
			.meta({ maxLength: PROMPT_LIMIT })
			.describe("The task or message for the coding agent."),
		title: titleArg(200)
			.optional()
			.describe(
				"Thread title for a new thread (default: derived from the prompt); with thread_id it renames the thread.",
			),
		model: z
			.string()
			.min(1)
			.max(ID_MAX)
			.optional()
			.describe(
				'Model as t3_models lists it ("<provider>/<slug>", e.g. "codex/gpt-5.6-sol"); it must be ready there. Default: the machine\'s model (a follow-up: the thread\'s).',
			),
		thread_id: segmentIdArg()
			.optional()
			.describe(
				"Continue this existing thread (from an earlier t3_dispatch or t3_threads) instead of creating one.",
			),
		mode: z
			.enum(["queue", "steer", "restart"])
			.optional()
			.describe(
				"For a follow-up while a run is going: queue (default) waits its turn, steer joins the running run, restart interrupts it and starts again with this message. With nothing running, all three start a run.",
			),
		runtime_mode: z
			.enum(["full-access", "approval-required", "auto-accept-edits", "auto"])
			.optional()
			.describe(
				"What the agent may do without asking, at most your client's access level: full-access (new threads' default without clients; otherwise your level), approval-required (every command or edit waits for t3_answer decision), auto-accept-edits, auto (T3 0.1.x: the provider decides what needs asking). A follow-up without it keeps the thread's current mode.",
			),
		interaction_mode: z
			.enum(["default", "plan"])
			.optional()
			.describe(
				'plan: the agent proposes a plan instead of changing files (only where t3_models says plan_mode: true). Default "default" for a new thread; a follow-up without it keeps the thread\'s.',
			),
		options: z
			.record(z.string().min(1).max(ID_MAX), z.union([z.string(), z.boolean()]))
			.optional()
			.describe(
				'Model options for this dispatch as {option id: value}, e.g. {"reasoningEffort": "high", "fastMode": true}; ids and values as t3_models lists them for the model in effect. They replace the machine\'s configured options.',
			),
		watch: z
			.boolean()
			.optional()
			.describe(
				"Send this thread's events (completed, failed, question…) to the webhook (default true).",
			),
		idempotency_key: keyArg()
			.optional()
			.describe(
				"Your key for this one dispatch: repeating the call with the same key and the same arguments returns the first call's thread and run and never starts a second run; the same key with different arguments is an error.",
			),
		request_id: keyArg()
			.optional()
			.describe(
				"Older name of idempotency_key (not a question's request_id); pass idempotency_key instead.",
			),
		workspace: z
			.enum(["root", "worktree"])
			.optional()
			.describe(
				'Where a new thread works: "root" (the project\'s own checkout) or "worktree" (a new git worktree on its own branch, so threads working in one project at the same time never touch each other\'s files; pick up the result as a branch). Use worktree for parallel work in one project. Default: the project\'s default_workspace (t3_projects). Not with thread_id or fork_of.',
			),
		base_ref: z
			.string()
			.min(1)
			.max(REF_MAX)
			.optional()
			.describe(
				"With workspace worktree: the git ref the new worktree starts from (default the project's current branch).",
			),
		branch: z
			.string()
			.min(1)
			.max(REF_MAX)
			.optional()
			.describe(
				"With workspace worktree: the new branch's name (default T3's choice). A valid git ref name.",
			),
		worktree_path: z
			.string()
			.min(1)
			.max(PATH_MAX)
			.optional()
			.describe(
				"Start the new thread in an existing worktree of the project, as t3_thread / t3_threads report it (worktree_path of another thread); any other path is refused.",
			),
		fork_of: segmentIdArg()
			.optional()
			.describe(
				"Start a new thread as a fork of this thread: it carries that thread's conversation (up to fork_run_id, default its latest stable point), then runs prompt; the source thread is not changed. machine and project may be omitted.",
			),
		fork_run_id: segmentIdArg()
			.optional()
			.describe(
				"With fork_of: the source thread's run (t3_thread runs[].id) whose end the fork starts from.",
			),
		// Limits are checked in dispatch() so each refusal names the attachment and the limit;
		// the schema only advertises them.
		attachments: z
			.array(
				z.strictObject({
					name: z
						.string()
						.meta({ maxLength: ATTACHMENT_NAME_MAX })
						.describe(
							'File name only (no / or \\), e.g. "screenshot.png"; at most 255 characters.',
						),
					mime_type: z
						.string()
						.describe(
							'MIME type, e.g. "image/png", "application/pdf", "text/plain" (image/* is sent as an image).',
						),
					data: z
						.string()
						.describe("The file's bytes, base64 (standard alphabet, padded)."),
				}),
			)
			.meta({ maxItems: ATTACHMENTS_MAX })
			.optional()
			.describe(
				"Files sent with the message, e.g. a screenshot or a log: up to 8, all together at most 3 MiB decoded (a /mcp request is capped at 4 MiB). For larger files, put them in the project and refer to them in the prompt.",
			),
		when_busy: z
			.enum(["hold", "refuse"])
			.optional()
			.describe(
				'For a new thread, when no machine has room now: "hold" keeps the dispatch in the server (durably, started oldest first when a machine has room) and answers at once with run_status "held", its final thread_id and held {position, reason, detail}; t3_wait waits through the hold, t3_interrupt withdraws it. "refuse" answers at once with error no_capacity (each candidate machine and why it has no room) or max_active_runs_reached. Default: hold for a machine pattern or with not_before, refuse for a named machine. Never with attachments (refused).',
			),
		not_before: z
			.string()
			.min(1)
			.max(64)
			.optional()
			.describe(
				'For a new thread: do not start it before this ISO time (e.g. "2026-12-05T18:00:00Z"; at most 7 days ahead; a time past means now). The dispatch is held until then, then started when a machine has room.',
			),
		wait: z
			.boolean()
			.optional()
			.describe(
				"Also wait for this run (default false): the result's `wait` is what t3_wait returns (completed, failed, interrupted, a question, or timeout after the server's wait timeout). A client with MCP Tasks gets a task at once that completes when the run settles or asks a question: dispatch and be woken in one call.",
			),
	}),
	outputSchema: z.object({
		thread_id: z.string(),
		machine: z
			.string()
			.nullable()
			.describe("null while a dispatch for a machine pattern is held."),
		project: heldProjectRefSchema,
		run_id: z.string().nullable(),
		run_status: z.string(),
		queued: z.boolean(),
		runtime_mode: z.string(),
		watched: z.boolean(),
		origin: z.string().nullable(),
		delivered_as: z
			.enum(["started", "queued", "steered", "restarted", "held"])
			.describe(
				"What T3 did with the message: started a run, queued it, steered it into the running run, or restarted that run with it; held: the server holds it until a machine has room.",
			),
		branch: z
			.string()
			.nullable()
			.describe(
				"The thread's git branch, as asked or as T3 assigned it; null until T3 says.",
			),
		worktree_path: z
			.string()
			.nullable()
			.describe(
				"The worktree the thread works in; null for the root checkout and until T3 has prepared it (t3_thread shows it then).",
			),
		branch_temporary: z
			.boolean()
			.describe(
				"The branch is T3's temporary t3code/<8 hex> name (sent for a worktree without branch, as T3's app does); T3 renames it once after the launch, where it can. t3_thread shows the new name.",
			),
		forked_from: z
			.string()
			.nullable()
			.describe("The thread this one was forked from (fork_of), else null."),
		placement: z
			.object({
				machine: z.string(),
				reason: z
					.enum(["only_room", "fewest_busy", "lowest_usage", "config_order"])
					.describe(
						"Why this machine among those with room: the only one, the fewest busy threads, the lowest usage of the model's provider, or the first in the server's config.",
					),
				skipped: z
					.array(
						z.object({
							machine: z.string(),
							reason: z.enum(HELD_REASONS),
							detail: z.string(),
						}),
					)
					.describe(
						"The machines matching the pattern that had no room, and why.",
					),
			})
			.nullable()
			.describe(
				"Where a machine pattern placed the new thread and why; null for a named machine.",
			),
		held: heldSchema
			.nullable()
			.describe(
				"A held dispatch: where it stands; null when it started (or was not held).",
			),
		wait: waitOutputSchema
			.nullable()
			.describe("With wait: true, how the wait ended; else null."),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: true,
		idempotentHint: false,
		openWorldHint: true,
	},
	async handler({ wait, ...args }, ctx, { threadDeps, metrics }) {
		// `wait` is not part of what an idempotency key claims: a replay may wait or not.
		const result: DispatchResult = await dispatch(threadDeps, args, ctx.origin);
		if (result.placement)
			metrics.inc("t3code_mcp_placements_total", {
				machine: result.placement.machine,
			});
		if (!wait)
			return ok(
				{ ...result, held: result.held ?? null, wait: null },
				result.queued ? QUEUED_NOTE : result.held ? HELD_NOTE : undefined,
			);
		const ids = [result.thread_id];
		if (ctx.tasks) {
			const first = await waitForThreads(threadDeps, ids, {
				timeoutS: 0,
				signal: ctx.signal,
			});
			if (settledAtOnce(first)) return dispatchWaitResult(result, first);
			return ctx.tasks.create({
				tool: "t3_dispatch",
				threadIds: ids,
				base: result,
			});
		}
		return dispatchWaitResult(
			result,
			await waitForThreads(threadDeps, ids, {
				timeoutS: threadDeps.settings.waitTimeoutS,
				signal: ctx.signal,
				progress: ctx.progress,
			}),
		);
	},
});
