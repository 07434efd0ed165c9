/**
 * Room `threads/read/`: the read tools' use cases (`t3_thread`, `t3_threads` with its search,
 * cursors and thread index, `t3_diff`, turn items, pull requests) and the row shapes they share.
 * May import `t3/` (read models, derive), `store/`, `util/` and the sibling rooms
 * `threads/dispatch`, `threads/wait`, `threads/control` for the shapes those define; never `mcp/`,
 * `tools/`, `http/` or `cli/`.
 */
/** `t3_thread`: one thread's state, latest run and the last runs' messages, tools and files. */

import {
	capText,
	pendingQuestion,
	runDetails,
	runError,
} from "../../t3/derive/derive.ts";
import { forkOrigin, inheritedMessages } from "../../t3/derive/fork-origin.ts";
import { NO_FAILURE, runFailure } from "../../t3/derive/run-failure.ts";
import { projectionBackgroundTasks } from "../../t3/derive/stop-target.ts";
import { isPinned } from "../control/organize.ts";
import type { ThreadDeps } from "../deps.ts";
import { attachmentsShape } from "../dispatch/attachments.ts";
import { chosenTemporary, placeShape } from "../dispatch/workspace.ts";
import { heldThreadView } from "../held-view.ts";
import { heldOf, locateThread, readDetail } from "../locate.ts";
import { appUrl, projectRef, questionShape } from "../shapes.ts";
import { pullRequestsOf } from "./pull-requests.ts";
import { queuedListing } from "./queued-list.ts";
import type { ThreadReadAhead } from "./read-ahead.ts";
import { backgroundTasks, snoozedUntil } from "./thread-state.ts";
import { readTurnItem } from "./turn-item.ts";

/** Keeps a result well under ~20k tokens: texts are capped, more tightly when many runs are asked. */
const RESULT_BUDGET_CHARS = 60_000;
const TEXT_CAPS = [8_000, 2_000, 500];

export async function readThread(
	deps: ThreadDeps,
	threadId: string,
	turns: number,
	readAhead?: ThreadReadAhead,
	itemId?: string,
) {
	// A held dispatch (not started yet) is shown as held (held-view.ts).
	const held = heldOf(deps, threadId);
	if (held) return heldThreadView(deps, held);
	const located = await locateThread(deps, threadId);
	// Read while T3's answer is on its way: the first sqlite read of a request costs ~20 µs,
	// which after the GET would add to every call.
	const record = deps.threads.get(threadId);
	if (
		readAhead?.threadId === threadId &&
		readAhead.machine === located.entry.config.name
	)
		located.detail ??= await readAhead.detail;
	const [{ projection }, item] = await Promise.all([
		readDetail(located),
		itemId === undefined
			? null
			: readTurnItem(located, itemId, TEXT_CAPS[0] as number),
	]);
	const thread = located.shell ?? projection.thread;
	const runs = [...projection.runs].sort((a, b) => a.ordinal - b.ordinal);
	const latest = runs.at(-1) ?? null;
	const session = projection.providerSessions.at(-1);
	const selection = thread.modelSelection ?? latest?.modelSelection ?? null;
	const place = placeShape({
		branch: thread.branch ?? projection.thread.branch,
		worktreePath: thread.worktreePath ?? projection.thread.worktreePath,
	});
	const origin = forkOrigin(thread) ?? forkOrigin(projection.thread);
	const failureOf = (run: (typeof runs)[number]) =>
		run.status === "failed"
			? runFailure(projection, run.id, located.shell)
			: NO_FAILURE;

	const build = (cap: number) => ({
		thread_id: threadId,
		machine: located.entry.config.name,
		project: projectRef(located.project),
		title: thread.title,
		// T3's shell status, or the same derivation from the projection's rows (threadActivity).
		status: thread.status,
		session: {
			provider: thread.providerInstanceId ?? selection?.instanceId ?? null,
			model: selection?.model ?? session?.model ?? null,
			status: session?.status ?? null,
		},
		latest_run: latest
			? {
					id: latest.id,
					ordinal: latest.ordinal,
					status: latest.status,
					requested_at: latest.requestedAt,
					started_at: latest.startedAt,
					completed_at: latest.completedAt,
					error: runError(projection, latest.id),
					...failureOf(latest),
				}
			: null,
		runs: runs.slice(-turns).map((run) => {
			const details = runDetails(projection, run.id);
			return {
				id: run.id,
				ordinal: run.ordinal,
				status: run.status,
				...failureOf(run),
				messages: details.messages.map((m) => ({
					role: m.role,
					text: capText(m.text, cap),
					attachments: attachmentsShape(m.attachments),
				})),
				tools: details.tools.map((t) => ({
					...t,
					title: t.title === null ? null : capText(t.title, 300),
				})),
				notices: details.notices.map((n) => ({
					kind: n.kind,
					text: capText(n.text, cap),
				})),
				files: details.files,
			};
		}),
		queued: queuedListing(projection, cap),
		question: questionShape(
			pendingQuestion(projection, undefined, {
				machine: located.entry.config.name,
			}),
		),
		...place,
		branch_temporary: chosenTemporary(
			place.branch,
			threadId,
			deps.dispatches.launchOf(threadId)?.payload,
		),
		forked_from: origin,
		// T3 keeps a fork's inherited conversation out of its runs (fork-origin.ts).
		inherited: origin
			? {
					messages: inheritedMessages(projection, turns).map((m) => ({
						role: m.role,
						text: capText(m.text, cap),
					})),
				}
			: null,
		pull_requests: pullRequestsOf(
			thread.pullRequests !== undefined ? thread : projection.thread,
		),
		snoozed_until: snoozedUntil(thread) ?? snoozedUntil(projection.thread),
		pinned: isPinned(thread),
		// The projection's rosters are as new as the read; the shell shows them coalesced, later.
		background_tasks: Math.max(
			backgroundTasks(located.shell ?? projection.thread),
			projectionBackgroundTasks(projection).length,
		),
		item,
		watched: record ? record.watched === 1 : false,
		origin: record?.origin ?? null,
		client: record?.client ?? null,
		app_url: appUrl(threadId),
		held: null,
	});

	let result = build(TEXT_CAPS[0] as number);
	for (const cap of TEXT_CAPS.slice(1)) {
		if (roughSize(result) <= RESULT_BUDGET_CHARS) break;
		result = build(cap);
	}
	return result;
}

/** The texts dominate a result's size; counting them is much cheaper than serialising it. */
function roughSize(result: {
	queued: { text: string }[];
	inherited: { messages: { text: string }[] } | null;
	runs: {
		messages: { text: string }[];
		notices: { text: string }[];
		tools: unknown[];
		files: unknown[];
	}[];
}) {
	let size = 2_000;
	for (const q of result.queued) size += 200 + q.text.length;
	for (const m of result.inherited?.messages ?? []) size += 200 + m.text.length;
	for (const run of result.runs) {
		size +=
			200 *
			(run.tools.length +
				run.files.length +
				run.messages.length +
				run.notices.length);
		for (const m of run.messages) size += m.text.length;
		for (const n of run.notices) size += n.text.length;
	}
	return size;
}
