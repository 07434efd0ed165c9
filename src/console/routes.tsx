/** @jsxImportSource hono/jsx */
/**
 * The console's HTTP side (CONTRACT.md "Console"): `/` → `/console`, the overview, a thread's
 * page, its actions, the live stream, sign-in and sign-out, and the served CSS and script.
 * Everything reads and acts through the signed-in client's scoped services (rights/for-client.ts)
 * as that client is configured now; every POST needs the session's CSRF token and passes the
 * Origin rule (web/same-origin.ts). Without clients or `T3CODE_MCP_TOKEN` it is served on
 * loopback listeners only (404 elsewhere), with no sign-in.
 */
import type { Context, Env, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { OPEN_CALLER } from "../config/clients.ts";
import type { ClientConfig } from "../config/types.ts";
import { callerMatcher, knownCallers } from "../rights/callers.ts";
import {
	onClientViewsForgotten,
	servicesForClient,
} from "../rights/for-client.ts";
import { forClient, refusal } from "../rights/tool-rights.ts";
import type { Services } from "../services.ts";
import { placelessRow } from "../store/audit.ts";
import { TERMINAL_RUN_STATUSES } from "../t3/model.ts";
import { type DiffFile, readDiff } from "../threads/read/diff.ts";
import { readThread } from "../threads/read/read.ts";
import { maskCredentials, maskDeep, mayHoldSecret } from "../util/redact.ts";
import { BASE_CSS } from "../web/page-css.ts";
import { assetHeaders, PAGE_HEADERS } from "../web/page-headers.ts";
import { originAllowed } from "../web/same-origin.ts";
import { actionFailure, consoleActions } from "./actions.ts";
import { CONSOLE_CSS } from "./console-css.ts";
import { CONSOLE_SCRIPT } from "./console-script.ts";
import { createLive } from "./live.tsx";
import { createNotices, type Notice } from "./notices.ts";
import { machineRow, overview } from "./overview.ts";
import { machinesPage, overviewPage, signInPage } from "./overview-page.tsx";
import {
	createSessionStore,
	SESSION_COOKIE,
	type Session,
	type SessionStore,
	sameText,
} from "./sessions.ts";
import { createSignInLimit } from "./sign-in-limit.ts";
import { type Allowed, missingThreadPage, threadPage } from "./thread-page.tsx";
import { CSS_PATH, SCRIPT_PATH, type Viewer } from "./view.tsx";

export interface ConsoleOptions {
	/** Whether the server listens on a loopback address: an open server serves the console there only. */
	loopbackListener: boolean;
	/** Messages a live stream may have waiting before it is dropped (default 1024). */
	maxQueued?: number;
}

/** Forms are small; an answer to a question is the longest. */
const MAX_FORM_BYTES = 64 * 1024;

const page = <E extends Env>(c: Context<E>, body: string, status = 200) =>
	c.body(body, status as 200, PAGE_HEADERS);

/** The address a request came from, for the sign-in limit ("unknown" in tests without a socket). */
function addressOf<E extends Env>(c: Context<E>): string {
	const server = c.env as
		| { requestIP?: (r: Request) => { address: string } | null }
		| undefined;
	try {
		return server?.requestIP?.(c.req.raw)?.address ?? "unknown";
	} catch {
		return "unknown";
	}
}

/** The form of a POST, read up to `MAX_FORM_BYTES` (undefined past it: never held whole). */
async function formOf(request: Request): Promise<URLSearchParams | undefined> {
	const length = Number(request.headers.get("content-length") ?? "0");
	if (length > MAX_FORM_BYTES) return undefined;
	if (!request.body) return new URLSearchParams();
	const chunks: Uint8Array[] = [];
	let size = 0;
	for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
		size += chunk.byteLength;
		if (size > MAX_FORM_BYTES) return undefined;
		chunks.push(chunk);
	}
	return new URLSearchParams(new TextDecoder().decode(Buffer.concat(chunks)));
}

export function mountConsole<E extends Env>(
	app: Hono<E>,
	services: Services,
	options: ConsoleOptions,
): void {
	const now = () => services.threadDeps.now();
	let store: SessionStore | undefined;
	const sessions = () => {
		store ??= createSessionStore(services.db, now);
		return store;
	};
	const limit = createSignInLimit(now);
	const notices = createNotices(now);
	const callerOf = callerMatcher(services.config);
	const live = createLive(services, {
		maxQueued: options.maxQueued,
		stillValid: (s) => sessions().stillValid(s, services.config),
	});
	live.start();
	services.threadDeps.shutdown?.addEventListener("abort", () => live.stop(), {
		once: true,
	});
	// A reload: sessions of a removed client or a changed token end now, streams included.
	onClientViewsForgotten(services, () =>
		live.closeWhere((s) => !sessions().stillValid(s, services.config)),
	);
	const open = () => knownCallers(services.config) === undefined;
	const secure = () =>
		services.config.server.publicUrl?.startsWith("https:") === true;
	const hours = () => services.config.server.consoleSessionHours ?? 12;

	const startSession = <C extends Context<E>>(c: C, client: ClientConfig) => {
		const session = sessions().create(client, hours());
		setCookie(c, SESSION_COOKIE, session.id, {
			httpOnly: true,
			sameSite: "Lax",
			secure: secure(),
			path: "/",
			maxAge: Math.round(hours() * 3600),
		});
		return session;
	};

	/** The request's session; an open server makes one for its one caller as needed. */
	const sessionOf = (c: Context<E>): Session | undefined => {
		const found = sessions().find(
			getCookie(c, SESSION_COOKIE),
			services.config,
		);
		if (found || !open()) return found;
		return startSession(c, OPEN_CALLER);
	};

	const viewerOf = (session: Session): Viewer => ({
		client: session.client.name,
		access: session.client.access,
		approve: session.client.approve,
		csrf: session.csrf,
		signedIn: !open(),
	});

	const toSignIn = (c: Context<E>) => {
		deleteCookie(c, SESSION_COOKIE, { path: "/", secure: secure() });
		return c.redirect("/console/sign-in", 303);
	};

	/** A POST's session, when its Origin and CSRF token are right; else the 403 to answer. */
	const postSession = async (
		c: Context<E>,
	): Promise<{ session: Session; form: URLSearchParams } | Response> => {
		if (!originAllowed(c.req.raw, services.config.server.publicUrl))
			return c.text("origin not allowed\n", 403);
		const form = await formOf(c.req.raw);
		if (!form) return c.text("form too large\n", 413);
		const session = sessions().find(
			getCookie(c, SESSION_COOKIE),
			services.config,
		);
		const csrf = form.get("csrf") ?? "";
		if (!session || !sameText(csrf, session.csrf))
			return c.text("missing or wrong CSRF token (reload the page)\n", 403);
		return { session, form };
	};

	const actions = consoleActions(services, now);
	/**
	 * The notice of the session's last action, for the page the action redirected to; the
	 * script's redraws (which may race that redirect) never take it.
	 */
	const noticeFor = (c: Context<E>, session: Session) =>
		c.req.header("x-console-redraw") === "1"
			? undefined
			: notices.take(session.idHash);

	// Only where the console is served: elsewhere the console does not exist (404).
	const served = () => !open() || options.loopbackListener;
	app.get("/", (c) => (served() ? c.redirect("/console", 302) : c.notFound()));
	for (const path of ["/console", "/console/*"])
		app.use(path, async (c, next) => {
			if (!served()) return c.notFound();
			await next();
		});
	app.get(CSS_PATH, (c) =>
		c.body(
			`${BASE_CSS}${CONSOLE_CSS}`,
			200,
			assetHeaders("text/css; charset=utf-8"),
		),
	);
	app.get(SCRIPT_PATH, (c) =>
		c.body(CONSOLE_SCRIPT, 200, assetHeaders("text/javascript; charset=utf-8")),
	);

	app.get("/console/sign-in", (c) => {
		if (open() || sessionOf(c)) return c.redirect("/console", 303);
		return page(c, signInPage({}));
	});
	app.post("/console/sign-in", async (c) => {
		if (!originAllowed(c.req.raw, services.config.server.publicUrl))
			return c.text("origin not allowed\n", 403);
		if (open()) return c.redirect("/console", 303);
		const address = addressOf(c);
		const audit = (result: string) =>
			services.audit.record(
				placelessRow(now(), "(none)", "console_sign_in", result, "console"),
			);
		const wait = limit.waitMs(address);
		if (wait > 0) {
			audit("rate_limited");
			c.header("retry-after", String(Math.ceil(wait / 1000)));
			return page(
				c,
				signInPage({
					notice: {
						tone: "error",
						text: `Too many failed sign-ins from this address: try again in ${Math.ceil(wait / 60_000)} min.`,
					},
				}),
				429,
			);
		}
		const form = await formOf(c.req.raw);
		if (!form) return c.text("form too large\n", 413);
		const token = form.get("token")?.trim() ?? "";
		const client = token === "" ? undefined : await callerOf(`Bearer ${token}`);
		if (!client) {
			limit.failed(address);
			audit("unauthorized");
			return page(
				c,
				signInPage({
					notice: {
						tone: "error",
						text: "That is not the token of any client of this server.",
					},
				}),
				401,
			);
		}
		limit.succeeded(address);
		startSession(c, client);
		return c.redirect("/console", 303);
	});
	app.post("/console/sign-out", async (c) => {
		const posted = await postSession(c);
		if (posted instanceof Response) return posted;
		sessions().end(posted.session.id);
		live.closeWhere((s) => s.idHash === posted.session.idHash);
		return toSignIn(c);
	});

	app.get("/console", async (c) => {
		const since = now();
		const session = sessionOf(c);
		if (!session) return toSignIn(c);
		const { client } = session;
		const scoped = servicesForClient(services, client);
		const after = c.req.query("after");
		let data: Awaited<ReturnType<typeof overview>>;
		let notice: Notice | undefined = noticeFor(c, session);
		try {
			data = await overview(services, scoped, client, after);
		} catch (error) {
			// A stale cursor (the listing changed shape): the first page instead.
			if (after === undefined) throw error;
			data = await overview(services, scoped, client, undefined);
			notice ??= { tone: "info", text: actionFailure(error) };
		}
		return page(
			c,
			overviewPage({
				viewer: viewerOf(session),
				data,
				now: now(),
				paged: after !== undefined,
				since,
				notice,
			}),
		);
	});

	app.get("/console/machines", (c) => {
		const since = now();
		const session = sessionOf(c);
		if (!session) return toSignIn(c);
		const scoped = servicesForClient(services, session.client);
		const at = now();
		return page(
			c,
			machinesPage({
				viewer: viewerOf(session),
				machines: scoped.fleet
					.list()
					.map((entry) => machineRow(scoped, entry, session.client, at)),
				now: at,
				since,
			}),
		);
	});

	app.get("/console/events", (c) => {
		// Never a new session here: a stream belongs to a page that has one.
		const session = sessions().find(
			getCookie(c, SESSION_COOKIE),
			services.config,
		);
		if (!session) return c.text("signed out\n", 401);
		const since = Number(c.req.query("since"));
		return live.open(
			session,
			c.req.raw.signal,
			Number.isFinite(since) ? since : undefined,
		);
	});

	app.get("/console/threads/:id", async (c) => {
		const since = now();
		const session = sessionOf(c);
		if (!session) return toSignIn(c);
		const { client } = session;
		const scoped = servicesForClient(services, client);
		const id = c.req.param("id");
		const viewer = viewerOf(session);
		let read: Awaited<ReturnType<typeof readThread>>;
		try {
			read = await readThread(scoped.threadDeps, id, 3);
		} catch (error) {
			return page(c, missingThreadPage(viewer, actionFailure(error)), 404);
		}
		// The rights as the MCP tools apply them: questions this client may not answer say so.
		let view = forClientView(client, read);
		if (mayHoldSecret(JSON.stringify(view))) view = maskDeep(view);
		const diff = await diffSummary(scoped, view);
		const allowed: Allowed = {
			decide:
				refusal(client, "t3_answer", { decision: "accept" }) === undefined,
			answer: refusal(client, "t3_answer", { answers: {} }) === undefined,
			interrupt: refusal(client, "t3_interrupt", {}) === undefined,
		};
		return page(
			c,
			threadPage({
				viewer,
				view,
				diff,
				allowed,
				now: now(),
				since,
				notice: noticeFor(c, session),
			}),
		);
	});

	for (const action of ["decide", "answer", "interrupt"] as const)
		app.post(`/console/threads/:id/${action}`, async (c) => {
			const posted = await postSession(c);
			if (posted instanceof Response) return posted;
			const { session, form } = posted;
			const id = c.req.param("id");
			const outcome = await actions[action](session.client, id, form);
			if (outcome.refused) return c.text(`${outcome.notice.text}\n`, 403);
			notices.set(session.idHash, outcome.notice);
			return c.redirect(`/console/threads/${encodeURIComponent(id)}`, 303);
		});

	// A held dispatch withdrawn (t3_interrupt's rights and audit): back to the overview.
	app.post("/console/held/:id/withdraw", async (c) => {
		const posted = await postSession(c);
		if (posted instanceof Response) return posted;
		const { session, form } = posted;
		const outcome = await actions.interrupt(
			session.client,
			c.req.param("id"),
			form,
		);
		if (outcome.refused) return c.text(`${outcome.notice.text}\n`, 403);
		notices.set(session.idHash, outcome.notice);
		return c.redirect("/console", 303);
	});

	app.post("/console/outbox/replay", async (c) => {
		const posted = await postSession(c);
		if (posted instanceof Response) return posted;
		const outcome = actions.replay(posted.session.client);
		if (outcome.refused) return c.text(`${outcome.notice.text}\n`, 403);
		notices.set(posted.session.idHash, outcome.notice);
		return c.redirect("/console", 303);
	});
}

/** `forClient` over a plain view (no MCP result around it). */
function forClientView<T extends Record<string, unknown>>(
	client: ClientConfig,
	view: T,
): T {
	return forClient(client, { content: [], structuredContent: view })
		.structuredContent as T;
}

/**
 * The diff summary of the thread's latest run, read once the run has settled (T3 has no
 * checkpoint before; a page redrawn at every change of a running thread asks nothing then).
 */
async function diffSummary(
	scoped: Services,
	view: { thread_id: string; latest_run: { status: string } | null },
): Promise<{ files: DiffFile[]; note: string | null }> {
	const run = view.latest_run;
	if (run === null) return { files: [], note: "No run yet." };
	if (!TERMINAL_RUN_STATUSES.has(run.status))
		return {
			files: [],
			note: `The latest run is ${run.status}: its diff comes when it settles.`,
		};
	try {
		const diff = await readDiff(scoped.threadDeps, {
			threadId: view.thread_id,
		});
		return {
			files: maskDeep(diff.files),
			note: diff.available ? null : maskCredentials(diff.reason ?? "No diff."),
		};
	} catch (error) {
		return { files: [], note: `Diff not available: ${actionFailure(error)}` };
	}
}
