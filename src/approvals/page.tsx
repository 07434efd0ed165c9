/** @jsxImportSource hono/jsx */
/**
 * The link page (`GET /a/<token>`), server-rendered with hono/jsx: no script, the stylesheet
 * from the server. It shows the approval as T3 said it (masked, and escaped by JSX like every
 * value) and one `<button name="decision">` per offered decision, or why there is nothing to
 * decide. The form posts back to the same address.
 */

import { maskSecrets } from "../util/redact.ts";
import { PageHead } from "../web/page-head.tsx";
import type { LinkRow, LinkView } from "./link-store.ts";

export const LINK_CSS_PATH = "/assets/link.css";

/** A message above the approval: what just happened, or why nothing can be decided. */
export interface Notice {
	tone: "ok" | "info" | "error";
	text: string;
}

const WANTS: Record<string, string> = {
	command: "run a command",
	"file-change": "change files",
	"file-read": "read files",
	"mcp-elicitation": "use an app",
	permission: "get a permission",
};

const when = (ms: number) =>
	new Date(ms)
		.toISOString()
		.replace("T", " ")
		.replace(/\.\d+Z$/, " UTC");

const Layout = (props: { title: string; children: unknown }) => (
	<html lang="en">
		<PageHead title={props.title} css={LINK_CSS_PATH} />
		<body>
			<main>{props.children}</main>
		</body>
	</html>
);

const Approval = (props: { view: LinkView }) => {
	const { view } = props;
	return (
		<>
			<section class="card">
				<dl>
					<dt>Machine</dt>
					<dd>{view.machine}</dd>
					<dt>Project</dt>
					<dd>
						{maskSecrets(view.project.title)}
						{view.project.path !== null && (
							<span class="path">{maskSecrets(view.project.path)}</span>
						)}
					</dd>
					<dt>Thread</dt>
					<dd>{maskSecrets(view.title)}</dd>
					{view.app_name !== null && (
						<>
							<dt>App</dt>
							<dd>{maskSecrets(view.app_name)}</dd>
						</>
					)}
				</dl>
			</section>
			<h2>
				The agent wants to{" "}
				{WANTS[view.request_kind] ?? `do this (${view.request_kind})`}
			</h2>
			<pre>{maskSecrets(view.prompt)}</pre>
		</>
	);
};

/** The page for a link, with its buttons when `offered` is given (the link is open). */
export function linkPage(props: {
	link: LinkRow;
	notice?: Notice;
	offered?: LinkView["decisions"];
	linkClient?: string;
}): string {
	const { link, notice, offered } = props;
	const open = offered !== undefined && offered.length > 0;
	return `<!doctype html>${(
		(
			<Layout title="Approval requested · t3code-mcp">
				<h1>{open ? "Approval requested" : "Approval"}</h1>
				{notice && <p class={`notice ${notice.tone}`}>{notice.text}</p>}
				<Approval view={link.view} />
				{open ? (
					<>
						<h2>Your decision</h2>
						<form method="post" class="decide">
							{offered.map((d) => (
								<div class="choice">
									<button
										type="submit"
										name="decision"
										value={d.decision}
										class={
											d.decision.startsWith("accept") ? "accept" : "decline"
										}
									>
										{maskSecrets(d.label)}
									</button>
									{d.warning !== null && (
										<p class="warning">Warning: {maskSecrets(d.warning)}</p>
									)}
								</div>
							))}
						</form>
						<p class="foot">
							This link works once and until {when(link.expires_at)}. It decides
							as client {props.linkClient ?? ""}.
						</p>
					</>
				) : (
					<p class="foot">Nothing to decide on this link.</p>
				)}
			</Layout>
		)
	).toString()}`;
}

/** The page for a token that names no link. */
export function unknownLinkPage(): string {
	return `<!doctype html>${(
		(
			<Layout title="Link not valid · t3code-mcp">
				<h1>This link is not valid</h1>
				<p class="notice error">
					No approval has this link. Check that the whole address was copied, or
					answer the approval in T3.
				</p>
			</Layout>
		)
	).toString()}`;
}

/** Why an open-no-more link decides nothing, in words. */
export function stateNotice(
	kind: "dead" | "expired" | "deciding" | "decided" | "settled",
	link: LinkRow,
): Notice {
	const label = (decision: string | null) =>
		link.view.decisions.find((d) => d.decision === decision)?.label ??
		decision ??
		"";
	switch (kind) {
		case "dead":
			return {
				tone: "error",
				text: "This link no longer works: the server's approval settings changed since it was made. Answer the approval in T3, or with an approver client.",
			};
		case "expired":
			return {
				tone: "error",
				text: `This link expired at ${when(link.expires_at)}. Answer the approval in T3, or with an approver client.`,
			};
		case "deciding":
			return {
				tone: "info",
				text: `A decision (${label(link.decision)}) is being sent right now from this link. Reload in a moment.`,
			};
		case "decided":
			return {
				tone: "ok",
				text: `Decided: ${label(link.decision)}, by client ${link.decided_by ?? ""} through this link${link.settled_at !== null ? ` at ${when(link.settled_at)}` : ""}.`,
			};
		case "settled":
			return {
				tone: "info",
				text:
					link.decision !== null || link.decided_by !== null
						? `Already answered elsewhere${link.decision !== null ? `: ${label(link.decision)}` : ""}${link.decided_by !== null ? `, by client ${link.decided_by}` : ""}${link.via !== null ? ` (${link.via})` : ""}. Nothing to decide here.`
						: "This request is no longer pending: it was answered elsewhere (in T3 or by another client), dismissed, or its run ended. Nothing to decide here.",
			};
	}
}
