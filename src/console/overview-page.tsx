/** @jsxImportSource hono/jsx */
/**
 * `/console`: machines, then the threads that need a person, the running ones and a page of the
 * latest settled; the outbox for full-access sessions. Lists carry `data-section` so the page's
 * script can move a changed row where it now belongs.
 */
import type { Notice } from "./notices.ts";
import type { MachineRow, Overview } from "./overview.ts";
import type { ConsoleRow } from "./rows.ts";
import {
	html,
	Layout,
	MachineItem,
	ThreadRow,
	type Viewer,
	When,
} from "./view.tsx";

const Section = (props: {
	id: "attention" | "active" | "settled";
	title: string;
	rows: ConsoleRow[];
	now: number;
	empty: string;
	live: boolean;
	more?: boolean;
}) => (
	<section class="section" aria-labelledby={`h-${props.id}`}>
		<h2 id={`h-${props.id}`}>
			{props.title}{" "}
			<span class="count">
				{props.rows.length}
				{props.more ? "+" : ""}
			</span>
		</h2>
		<ul
			class="rows"
			data-section={props.id}
			data-live={props.live ? "yes" : "no"}
		>
			{props.rows.length === 0 ? (
				<li class="empty">{props.empty}</li>
			) : (
				props.rows.map((row) => <ThreadRow row={row} now={props.now} />)
			)}
		</ul>
		{props.more && (
			<p class="foot">
				The newest {props.rows.length} are shown; t3_threads with state "
				{props.id}" lists every one.
			</p>
		)}
	</section>
);

/** Machines listed one by one up to this many; past it, only those that need a look. */
export const MACHINES_LISTED = 12;

/** A machine a person should see on the overview: not online, or its token soon expiring. */
const needsLook = (m: MachineRow) => m.state !== "online" || m.token_warning;

/**
 * The machines: every one in a small fleet; in a large one, those that need a look and one
 * line for the rest, linking to the full list (a person scrolls past 500 rows to nothing).
 */
const Machines = (props: { machines: MachineRow[]; now: number }) => {
	const { machines, now } = props;
	const all = machines.length <= MACHINES_LISTED;
	const shown = all ? machines : machines.filter(needsLook);
	const rest = all ? [] : machines.filter((m) => !needsLook(m));
	const runs = rest.reduce((n, m) => n + m.runs, 0);
	return (
		<section class="section" aria-labelledby="h-machines">
			<h2 id="h-machines">
				Machines <span class="count">{machines.length}</span>
			</h2>
			<ul class="rows" data-section="machines" data-all={all ? "yes" : "no"}>
				{machines.length === 0 && (
					<li class="empty">No machine within this client's reach.</li>
				)}
				{shown.map((m) => (
					<MachineItem machine={m} now={now} />
				))}
				{rest.length > 0 && (
					<li class="row summary">
						<a class="title" href="/console/machines">
							{rest.length} {shown.length > 0 ? "more " : ""}online
						</a>
						<span class="meta">
							<span>
								{runs} run{runs === 1 ? "" : "s"} going
							</span>
						</span>
					</li>
				)}
			</ul>
		</section>
	);
};

/** `/console/machines`: every machine within the client's reach. */
export function machinesPage(props: {
	viewer: Viewer;
	machines: MachineRow[];
	now: number;
	since: number;
}): string {
	return html(
		<Layout
			title="Machines · t3code-mcp console"
			viewer={props.viewer}
			live="/console/events"
			since={props.since}
		>
			<p class="crumbs">
				<a href="/console">← Console</a>
			</p>
			<h1>Machines</h1>
			<ul class="rows" data-section="machines" data-all="yes">
				{props.machines.length === 0 ? (
					<li class="empty">No machine within this client's reach.</li>
				) : (
					props.machines.map((m) => <MachineItem machine={m} now={props.now} />)
				)}
			</ul>
		</Layout>,
	);
}

export function overviewPage(props: {
	viewer: Viewer;
	data: Overview;
	now: number;
	paged: boolean;
	since: number;
	notice?: Notice | undefined;
}): string {
	const { data, now, viewer } = props;
	return html(
		<Layout
			title="Console · t3code-mcp"
			viewer={viewer}
			live="/console/events"
			since={props.since}
		>
			{props.notice && (
				<p class={`notice ${props.notice.tone}`} role="status">
					{props.notice.text}
				</p>
			)}
			<Machines machines={data.machines} now={now} />
			{data.held && data.held.length > 0 && (
				<section class="section" aria-labelledby="h-held">
					<h2 id="h-held">
						Held <span class="count">{data.held.length}</span>
					</h2>
					<ul class="rows" data-section="held">
						{data.held.map((h) => (
							<li class="row held" data-thread={h.thread_id}>
								<span>
									#{h.position} {h.title} · {h.machine} · {h.project}
								</span>
								<span class="detail">
									{h.reason}: {h.detail} (since {h.since})
								</span>
								<form
									method="post"
									action={`/console/held/${encodeURIComponent(h.thread_id)}/withdraw`}
									class="actions"
								>
									<input type="hidden" name="csrf" value={viewer.csrf} />
									<button type="submit">Withdraw</button>
								</form>
							</li>
						))}
					</ul>
				</section>
			)}
			<Section
				id="attention"
				title="Needs a person"
				rows={data.attention}
				now={now}
				empty="Nothing waits for a person."
				live
				more={data.more.attention}
			/>
			<Section
				id="active"
				title="Running"
				rows={data.active}
				now={now}
				empty="Nothing is running."
				live
				more={data.more.active}
			/>
			<Section
				id="settled"
				title={props.paged ? "Settled (older)" : "Latest settled"}
				rows={data.settled}
				now={now}
				empty="No settled thread."
				live={!props.paged}
			/>
			<nav class="pager" aria-label="Settled threads">
				{props.paged && <a href="/console">Newest</a>}
				{data.next !== null && (
					<a href={`/console?after=${encodeURIComponent(data.next)}`}>
						Older settled threads
					</a>
				)}
			</nav>
			{data.unavailable.length > 0 && (
				<p class="foot">
					Not readable now (their threads are missing above):{" "}
					{data.unavailable.join(", ")}.
				</p>
			)}
			{data.outbox && (
				<section class="section" aria-labelledby="h-outbox">
					<h2 id="h-outbox">Outbox</h2>
					<div class="card">
						<dl>
							<dt>Pending</dt>
							<dd>
								{data.outbox.pending}
								{data.outbox.pending > 0 &&
									` (oldest ${data.outbox.oldest_pending_s} s)`}
							</dd>
							<dt>Dead</dt>
							<dd>{data.outbox.dead}</dd>
							<dt>Held</dt>
							<dd>{data.outbox.held}</dd>
							<dt>Last error</dt>
							<dd>{data.outbox.last_error ?? "none"}</dd>
						</dl>
						{data.outbox.dead > 0 && (
							<form
								method="post"
								action="/console/outbox/replay"
								class="actions"
							>
								<input type="hidden" name="csrf" value={viewer.csrf} />
								<button type="submit">
									Replay {data.outbox.dead} dead event
									{data.outbox.dead === 1 ? "" : "s"}
								</button>
							</form>
						)}
					</div>
				</section>
			)}
			<p class="foot">
				Shown <When at={now} now={now} />. Changes appear by themselves; without
				JavaScript, reload the page.
			</p>
		</Layout>,
	);
}

export function signInPage(props: { notice?: Notice | undefined }): string {
	return html(
		<Layout title="Sign in · t3code-mcp console" viewer={null}>
			<h1>Sign in</h1>
			{props.notice && (
				<p class={`notice ${props.notice.tone}`} role="alert">
					{props.notice.text}
				</p>
			)}
			<form method="post" action="/console/sign-in" class="card stack">
				<label for="token">A client's bearer token</label>
				<input
					id="token"
					name="token"
					type="password"
					autocomplete="current-password"
					required
					autofocus
				/>
				<button type="submit" class="accept">
					Sign in
				</button>
				<p class="foot">
					The console acts as that client: its machines and projects only, and
					only what its level and approve right allow.
				</p>
			</form>
		</Layout>,
	);
}
