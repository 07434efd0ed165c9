/**
 * The people hook's event bodies (CONTRACT.md "Approval links"): `approval.requested` with its
 * link and `approval.settled`, and the view of an approval a link keeps (T3 text masked).
 * Neither carries an `X-Conversation-Origin`: they must never be routed into the agent's own
 * conversation.
 */
import { eventId } from "../events/event.ts";
import type { PendingQuestionView } from "../t3/derive/pending-question.ts";
import type {
	PendingRuntimeRequest,
	ProjectShell,
	ThreadShell,
} from "../t3/model.ts";
import { projectRef } from "../threads/shapes.ts";
import { maskSecrets } from "../util/redact.ts";
import type { AnsweredBy } from "./answer-notes.ts";

/** What a link shows and its event says of the approval: masked once, when it is made. */
export function linkView(
	machine: string,
	project: ProjectShell,
	shell: Pick<ThreadShell, "title">,
	question: Pick<PendingQuestionView, "prompt" | "request_kind" | "app_name">,
	offered: { decision: string; label: string; warning: string | null }[],
) {
	const ref = projectRef(project);
	return {
		machine,
		project: {
			id: ref.id,
			title: maskSecrets(ref.title),
			path: ref.path === null ? null : maskSecrets(ref.path),
		},
		title: maskSecrets(shell.title),
		prompt: maskSecrets(question.prompt),
		request_kind: question.request_kind,
		decisions: offered.map((d) => ({
			decision: d.decision,
			label: maskSecrets(d.label),
			warning: d.warning === null ? null : maskSecrets(d.warning),
		})),
		app_name: question.app_name,
	};
}

export type LinkView = ReturnType<typeof linkView>;

/** The outbox row of `approval.requested`: the one place the raw link is written. */
export function requestedEvent(input: {
	view: LinkView;
	threadId: string;
	request: Pick<PendingRuntimeRequest, "id" | "createdAt">;
	record: { client: string | null; origin: string | null } | undefined;
	now: number;
	expires: number;
	url: string;
}) {
	const { view, threadId, request, record } = input;
	const id = eventId();
	return {
		id,
		thread_id: threadId,
		dedupe_key: `requested:${request.id}`,
		type: "approval.requested",
		origin: null,
		body: {
			id,
			type: "approval.requested",
			occurred_at: request.createdAt ?? new Date(input.now).toISOString(),
			expires_at: new Date(input.expires).toISOString(),
			machine: view.machine,
			thread_id: threadId,
			project: view.project,
			title: view.title,
			client: record?.client ?? null,
			origin: record?.origin ?? null,
			question: {
				request_id: request.id,
				prompt: view.prompt,
				decisions: view.decisions,
			},
			approval_url: input.url,
		},
	};
}

/** The outbox row of `approval.settled`: who decided and how, when known. */
export function settledEvent(
	link: { thread_id: string; request_id: string },
	how: AnsweredBy,
	now: number,
) {
	const id = eventId();
	return {
		id,
		thread_id: link.thread_id,
		dedupe_key: `settled:${link.request_id}`,
		type: "approval.settled",
		origin: null,
		body: {
			id,
			type: "approval.settled",
			occurred_at: new Date(now).toISOString(),
			thread_id: link.thread_id,
			request_id: link.request_id,
			decision: how.decision,
			client: how.client,
			via: how.via,
		},
	};
}
