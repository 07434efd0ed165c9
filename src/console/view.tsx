/** @jsxImportSource hono/jsx */
/**
 * The console's shared pieces, server-rendered with hono/jsx (every value escaped by JSX; no
 * raw HTML anywhere): the page shell with its served stylesheet and script, times shown
 * relative with the exact time on hover, and the thread and machine rows, which the live stream
 * also sends as they change.
 */
import type { Child } from "hono/jsx";
import { PageHead } from "../web/page-head.tsx";
import type { MachineRow } from "./overview.ts";
import type { ConsoleRow } from "./rows.ts";

export const CSS_PATH = "/console/assets/console.css";
export const SCRIPT_PATH = "/console/assets/console.js";

/** What a page's header knows of the session; null on the sign-in page. */
export interface Viewer {
	client: string;
	access: string;
	approve: boolean;
	csrf: string;
	/** Sign-in is needed (clients or a token configured): a sign-out button is shown. */
	signedIn: boolean;
}

/** "4 min ago", "in 3 h", from epoch ms against `now`. */
export function relative(at: number, now: number): string {
	const s = Math.round((now - at) / 1000);
	const abs = Math.abs(s);
	const say = (n: number, unit: string) =>
		s >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
	if (abs < 10) return s >= 0 ? "just now" : "in a moment";
	if (abs < 60) return say(abs, "s");
	if (abs < 3600) return say(Math.round(abs / 60), "min");
	if (abs < 86_400) return say(Math.round(abs / 3600), "h");
	return say(Math.round(abs / 86_400), "d");
}

export const exact = (at: number) =>
	new Date(at)
		.toISOString()
		.replace("T", " ")
		.replace(/\.\d+Z$/, " UTC");

/** A time shown relative, the exact time on hover (and for the script that keeps it fresh). */
export const When = (props: { at: number | null; now: number }) =>
	props.at === null ? (
		<span class="muted">—</span>
	) : (
		<time
			datetime={new Date(props.at).toISOString()}
			title={exact(props.at)}
			data-rel=""
		>
			{relative(props.at, props.now)}
		</time>
	);

export const Layout = (props: {
	title: string;
	viewer: Viewer | null;
	live?: string;
	/** When the data shown was read (epoch ms): the live stream redraws if anything changed since. */
	since?: number;
	children: Child;
}) => (
	<html lang="en">
		<PageHead
			title={props.title}
			css={CSS_PATH}
			script={props.viewer ? SCRIPT_PATH : undefined}
		/>
		<body data-live={props.live}>
			<header class="top">
				<a class="brand" href="/console">
					t3code-mcp console
				</a>
				{props.viewer && (
					<span class="who">
						<span
							title={`access ${props.viewer.access}${props.viewer.approve ? ", approves" : ""}`}
						>
							{props.viewer.client}
						</span>
						{props.viewer.signedIn && (
							<form method="post" action="/console/sign-out" class="inline">
								<input type="hidden" name="csrf" value={props.viewer.csrf} />
								<button type="submit" class="small">
									Sign out
								</button>
							</form>
						)}
					</span>
				)}
			</header>
			<main id="main" data-since={props.since}>
				{props.children}
			</main>
		</body>
	</html>
);

const PENDING: Record<string, string> = {
	approval: "approval",
	question: "question",
	auth_refresh: "sign-in",
	dynamic_tool: "tool call",
};

export const threadHref = (id: string) =>
	`/console/threads/${encodeURIComponent(id)}`;

/** One thread in a list (also what the live stream sends when it changes). */
export const ThreadRow = (props: { row: ConsoleRow; now: number }) => {
	const { row, now } = props;
	const flag =
		row.pending !== null
			? `waits: ${PENDING[row.pending] ?? row.pending}`
			: row.status;
	return (
		<li class={`row ${row.state}`} data-thread={row.thread_id}>
			<a class="title" href={threadHref(row.thread_id)}>
				{row.title || "(untitled)"}
			</a>
			<span class="meta">
				<span class={`badge ${row.pending !== null ? "pending" : row.status}`}>
					{flag}
				</span>
				{row.pending !== null && row.pending_since !== null && (
					<span>
						asked <When at={row.pending_since} now={now} />
					</span>
				)}
				<span title="machine · project">
					{row.machine} · {row.project}
				</span>
				{row.client !== null && <span>client {row.client}</span>}
				{row.pending === null && (
					<span>
						<When at={row.updated_at} now={now} />
					</span>
				)}
			</span>
			{row.error !== null && <span class="error">{row.error}</span>}
		</li>
	);
};

/** One machine (also sent by the live stream when its state changes). */
export const MachineItem = (props: { machine: MachineRow; now: number }) => {
	const { machine: m, now } = props;
	return (
		<li class={`row machine ${m.state}`} data-machine={m.name}>
			<span class="title">{m.name}</span>
			<span class="meta">
				<span class={`badge ${m.state}`}>{m.state}</span>
				<span>
					{m.runs} run{m.runs === 1 ? "" : "s"} going
				</span>
				{m.max_active_runs !== null && (
					<span
						class={m.active_runs >= m.max_active_runs ? "warn" : ""}
						data-cap
					>
						{m.active_runs} / {m.max_active_runs} busy
					</span>
				)}
				{m.usage.map((u) => (
					<span class="usage" data-provider={u.provider}>
						{u.provider} {u.label}{" "}
						{u.used_percent === null ? (
							"unknown"
						) : (
							<>
								<meter min={0} max={100} high={90} value={u.used_percent} />{" "}
								{Math.round(u.used_percent)} %
							</>
						)}
					</span>
				))}
				{m.token_expires_at !== null && (
					<span class={m.token_warning ? "warn" : ""}>
						{m.token_warning ? "⚠ token expires " : "token expires "}
						<When at={m.token_expires_at} now={now} />
					</span>
				)}
			</span>
			{m.reason !== null && <span class="error">{m.reason}</span>}
		</li>
	);
};

/** `<!doctype html>` and the element, as the response body. */
export const html = (element: unknown) => `<!doctype html>${String(element)}`;
