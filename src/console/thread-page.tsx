/** @jsxImportSource hono/jsx */
/**
 * `/console/threads/<id>`: everything `t3_thread` knows, laid out for reading — title, place,
 * status, client and origin; the pending question or approval with every option and T3's
 * warning, and the actions this session's client may take; the latest runs' messages, tools
 * (status, exit code) and changed files; the diff summary; `app_url` to open it in T3.
 */

import type { DiffFile } from "../threads/read/diff.ts";
import type { readThread } from "../threads/read/read.ts";
import type { Notice } from "./notices.ts";
import { html, Layout, type Viewer } from "./view.tsx";

export type ThreadView = Awaited<ReturnType<typeof readThread>>;

/** What the session's client may do on this thread now (rights as they are now). */
export interface Allowed {
	decide: boolean;
	answer: boolean;
	interrupt: boolean;
}

const Hidden = (props: { csrf: string; requestId?: string }) => (
	<>
		<input type="hidden" name="csrf" value={props.csrf} />
		{props.requestId !== undefined && (
			<input type="hidden" name="request_id" value={props.requestId} />
		)}
	</>
);

const Question = (props: {
	view: ThreadView;
	action: string;
	csrf: string;
	allowed: Allowed;
}) => {
	const q = props.view.question;
	if (!q) return null;
	const approval = q.kind === "approval";
	const canAct =
		q.answerable && (approval ? props.allowed.decide : props.allowed.answer);
	return (
		<section class="section" aria-labelledby="h-question">
			<h2 id="h-question">
				{approval ? "Approval requested" : "Question"}
				{q.app_name !== null && ` (${q.app_name})`}
			</h2>
			<div class="card stack">
				{q.prompt !== null && <pre>{q.prompt}</pre>}
				{!q.answerable && q.reason !== null && (
					<p class="notice info">{q.reason}</p>
				)}
				{approval && (
					<form method="post" action={`${props.action}/decide`} class="stack">
						<Hidden csrf={props.csrf} requestId={q.request_id} />
						{(q.decisions ?? []).map((d) => (
							<div class="choice">
								{canAct ? (
									<button
										type="submit"
										name="decision"
										value={d.decision}
										class={
											d.decision.startsWith("accept") ? "accept" : "decline"
										}
									>
										{d.label}
									</button>
								) : (
									<p class="option">{d.label}</p>
								)}
								{d.warning !== null && (
									<p class="warning">Warning: {d.warning}</p>
								)}
							</div>
						))}
					</form>
				)}
				{!approval && q.questions.length > 0 && (
					<form method="post" action={`${props.action}/answer`} class="stack">
						<Hidden csrf={props.csrf} requestId={q.request_id} />
						{q.questions.map((item) => (
							<fieldset class="stack" disabled={!canAct}>
								<legend>
									{item.header !== null && <strong>{item.header}: </strong>}
									{item.text}
								</legend>
								{item.options.map((option) => (
									<label class="option">
										<input
											type={item.multi_select ? "checkbox" : "radio"}
											name={`q:${item.id}`}
											value={option}
										/>{" "}
										{option}
									</label>
								))}
								{(item.allow_custom || item.options.length === 0) && (
									<label class="option">
										Your answer{" "}
										<input
											type="text"
											name={`text:${item.id}`}
											maxlength={4000}
										/>
									</label>
								)}
							</fieldset>
						))}
						{canAct && <button type="submit">Send the answer</button>}
					</form>
				)}
			</div>
		</section>
	);
};

export function threadPage(props: {
	viewer: Viewer;
	view: ThreadView;
	diff: { files: DiffFile[]; note: string | null };
	allowed: Allowed;
	now: number;
	since: number;
	notice?: Notice | undefined;
}): string {
	const { view, viewer, allowed } = props;
	const action = `/console/threads/${encodeURIComponent(view.thread_id)}`;
	const running =
		view.latest_run !== null &&
		["preparing", "starting", "running", "waiting", "queued"].includes(
			view.latest_run.status,
		);
	return html(
		<Layout
			title={`${view.title || "Thread"} · t3code-mcp console`}
			viewer={viewer}
			live="/console/events"
			since={props.since}
		>
			<p class="crumbs">
				<a href="/console">← Console</a>
			</p>
			<h1 data-thread-page={view.thread_id}>{view.title || "(untitled)"}</h1>
			{props.notice && (
				<p class={`notice ${props.notice.tone}`} role="status">
					{props.notice.text}
				</p>
			)}
			<Question
				view={view}
				action={action}
				csrf={viewer.csrf}
				allowed={allowed}
			/>
			<div class="card">
				<dl>
					<dt>Status</dt>
					<dd>
						<span class={`badge ${view.status}`}>{view.status}</span>
						{view.latest_run?.error && (
							<span class="error">{view.latest_run.error}</span>
						)}
					</dd>
					<dt>Machine</dt>
					<dd>{view.machine}</dd>
					<dt>Project</dt>
					<dd>
						{view.project.title}
						{view.project.path !== null && (
							<span class="path">{view.project.path}</span>
						)}
					</dd>
					<dt>Branch</dt>
					<dd>
						{view.branch ?? "—"}
						{view.worktree_path !== null && (
							<span class="path">{view.worktree_path}</span>
						)}
					</dd>
					<dt>Client</dt>
					<dd>{view.client ?? "—"}</dd>
					<dt>Origin</dt>
					<dd>{view.origin ?? "—"}</dd>
					<dt>Model</dt>
					<dd>
						{[view.session.provider, view.session.model]
							.filter((s) => s !== null)
							.join(" / ") || "—"}
					</dd>
					{view.forked_from !== null && (
						<>
							<dt>Forked from</dt>
							<dd>
								<a
									href={`/console/threads/${encodeURIComponent(view.forked_from.thread_id)}`}
								>
									{view.forked_from.thread_id}
								</a>
							</dd>
						</>
					)}
					{(view.pinned ||
						view.snoozed_until !== null ||
						view.background_tasks > 0) && (
						<>
							<dt>Also</dt>
							<dd>
								{[
									view.pinned ? "pinned" : null,
									view.snoozed_until !== null
										? `snoozed until ${view.snoozed_until}`
										: null,
									view.background_tasks > 0
										? `${view.background_tasks} background task${view.background_tasks === 1 ? "" : "s"} running`
										: null,
								]
									.filter((s) => s !== null)
									.join(" · ")}
							</dd>
						</>
					)}
					{view.pull_requests.length > 0 && (
						<>
							<dt>Pull requests</dt>
							<dd>
								{view.pull_requests.map((pr) => (
									<span class="path">
										{pr.number !== null ? `#${pr.number} ` : ""}
										{pr.title ?? ""}
										{pr.state !== null ? ` (${pr.state})` : ""}
										{pr.url !== null && /^https?:\/\//i.test(pr.url) && (
											<>
												{" "}
												<a href={pr.url} rel="noreferrer noopener">
													open
												</a>
											</>
										)}
									</span>
								))}
							</dd>
						</>
					)}
					<dt>In T3</dt>
					<dd>
						<a href={view.app_url}>{view.app_url}</a>
					</dd>
				</dl>
				{running && allowed.interrupt && (
					<form method="post" action={`${action}/interrupt`} class="actions">
						<Hidden csrf={viewer.csrf} />
						<button type="submit" class="decline">
							Interrupt the run
						</button>
					</form>
				)}
			</div>
			{view.queued.length > 0 && (
				<section class="section">
					<h2>Queued follow-ups</h2>
					<ol class="stack">
						{view.queued.map((q) => (
							<li>
								{q.held && <span class="badge">held</span>} {q.text}
							</li>
						))}
					</ol>
				</section>
			)}
			{[...view.runs].reverse().map((run) => (
				<section class="section run">
					<h2>
						Run {run.ordinal}{" "}
						<span class={`badge ${run.status}`}>{run.status}</span>
					</h2>
					{run.messages.map((m) => (
						<div class={`message ${m.role}`}>
							<span class="role">{m.role}</span>
							<pre>{m.text}</pre>
						</div>
					))}
					{run.notices.map((n) => (
						<p class="notice info">{n.text}</p>
					))}
					{run.tools.length > 0 && (
						<ul class="rows tools">
							{run.tools.map((t) => (
								<li class={`row ${t.failed ? "failed" : ""}`}>
									<span class="title">{t.title ?? t.kind}</span>
									<span class="meta">
										<span class={`badge ${t.status ?? ""}`}>
											{t.status ?? "—"}
										</span>
										<span>{t.kind}</span>
										{t.exit_code !== null && <span>exit {t.exit_code}</span>}
									</span>
								</li>
							))}
						</ul>
					)}
					{run.files.length > 0 && (
						<ul class="files">
							{run.files.map((f) => (
								<li>
									<span class="badge">{f.change}</span> <code>{f.path}</code>
								</li>
							))}
						</ul>
					)}
				</section>
			))}
			<section class="section">
				<h2>Diff summary</h2>
				{props.diff.files.length > 0 ? (
					<ul class="files">
						{props.diff.files.map((f) => (
							<li>
								<code>{f.path}</code> <span class="add">+{f.additions}</span>{" "}
								<span class="del">−{f.deletions}</span>
							</li>
						))}
					</ul>
				) : (
					<p class="foot">{props.diff.note ?? "No changes."}</p>
				)}
			</section>
		</Layout>,
	);
}

/** The page for a thread this client cannot see (unknown, or outside its reach). */
export function missingThreadPage(viewer: Viewer, message: string): string {
	return html(
		<Layout title="Thread not found · t3code-mcp console" viewer={viewer}>
			<p class="crumbs">
				<a href="/console">← Console</a>
			</p>
			<h1>Thread not found</h1>
			<p class="notice error">{message}</p>
		</Layout>,
	);
}
