/**
 * The HTTP side of approval links: `GET /a/<token>` shows the approval (a GET never decides:
 * link previews and prefetchers are harmless), `POST /a/<token>` decides once, and the page's
 * stylesheet. Pages forbid framing, scripts and inline styles. A POST whose `Origin` is present
 * and is neither `public_url`'s origin nor the request's own is refused (403), whatever else
 * `T3CODE_MCP_ALLOWED_ORIGINS` lets through for MCP clients.
 */
import type { Context, Env, Hono } from "hono";
import type { Services } from "../services.ts";
import { PAGE_HEADERS } from "../web/page-headers.ts";
import { originAllowed } from "../web/same-origin.ts";
import type { LinkState } from "./approvals.ts";
import {
	LINK_CSS_PATH,
	linkPage,
	type Notice,
	stateNotice,
	unknownLinkPage,
} from "./page.tsx";
import { LINK_CSS } from "./page-css.ts";

/** A form with one field: anything longer is not ours. */
const MAX_FORM_BYTES = 4096;

const page = <E extends Env>(c: Context<E>, html: string, status = 200) =>
	c.body(html, status as 200, PAGE_HEADERS);

/** The page for a link's state, with `notice` above it when given. */
function render(
	services: Services,
	state: LinkState,
	notice?: Notice,
	status = 200,
) {
	if (state.kind === "unknown") return { html: unknownLinkPage(), status: 404 };
	const linkClient = services.config.approvals?.linkClient;
	if (state.kind === "open")
		return {
			html: linkPage({
				link: state.link,
				offered: state.offered,
				linkClient,
				...(notice ? { notice } : {}),
			}),
			status,
		};
	return {
		html: linkPage({
			link: state.link,
			notice: notice ?? stateNotice(state.kind, state.link),
		}),
		status,
	};
}

export function mountApprovalRoutes<E extends Env>(
	app: Hono<E>,
	services: Services,
) {
	app.get(LINK_CSS_PATH, (c) =>
		c.body(LINK_CSS, 200, {
			"content-type": "text/css; charset=utf-8",
			"x-content-type-options": "nosniff",
			"cache-control": "public, max-age=3600",
		}),
	);
	app.get("/a/:token", (c) => {
		const { html, status } = render(
			services,
			services.approvals.state(c.req.param("token")),
		);
		return page(c, html, status);
	});
	app.post("/a/:token", async (c) => {
		const origin = c.req.header("origin");
		if (!originAllowed(c.req.raw, services.config.server.publicUrl))
			return c.json({ error: "origin not allowed", origin }, 403);
		const length = Number(c.req.header("content-length") ?? "0");
		if (length > MAX_FORM_BYTES) return c.text("form too large\n", 413);
		const text = await c.req.raw.text();
		if (text.length > MAX_FORM_BYTES) return c.text("form too large\n", 413);
		const decision = new URLSearchParams(text).get("decision") ?? "";
		const token = c.req.param("token");
		const outcome = await services.approvals.decide(token, decision);
		if (outcome.kind === "sent") {
			const { html } = render(services, {
				kind: "decided",
				link: outcome.link,
			});
			return page(c, html);
		}
		if (outcome.kind === "failed") {
			const { link } = outcome.state as { link?: { machine: string } };
			const { html } = render(
				services,
				outcome.state,
				outcome.offline
					? {
							tone: "error",
							text: `Machine "${link?.machine ?? ""}" cannot be reached now, so nothing was decided. This link still works: try again when the machine is back.`,
						}
					: {
							tone: "error",
							text: `T3 did not take the decision: ${outcome.reason}`,
						},
			);
			return page(c, html, outcome.offline ? 503 : 409);
		}
		if (outcome.kind === "not_offered") {
			const { html } = render(services, outcome.state, {
				tone: "error",
				text: "That decision is not offered on this link. Choose one of the buttons.",
			});
			return page(c, html, 400);
		}
		const { html, status } = render(services, outcome.state);
		return page(c, html, status === 404 ? 404 : 409);
	});
}
