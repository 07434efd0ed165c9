/**
 * The simulator's HTTP surface (PROTOCOL.md §1–§3): descriptor, auth session, ticket mint,
 * and the protocol-2 read routes with the exact tagged error bodies of §2.7. Web-standard
 * Request → Response; the `/ws` upgrade lives in sim.ts because it needs the Bun server.
 */

import type { SimContext } from "../context.ts";
import { bearerOf, READ_SCOPE } from "./auth.ts";
import { v1Shell } from "./rpc-server.ts";
import { AUTH_DESCRIPTOR, environmentDescriptor } from "./server-config.ts";

const traceId = () => crypto.randomUUID().replaceAll("-", "");

export const json = (
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
): Response =>
	Response.json(body, {
		status,
		headers: { "Access-Control-Allow-Origin": "*", ...headers },
	});

export const authInvalid = (
	reason: "missing_credential" | "invalid_credential",
): Response =>
	json(401, {
		_tag: "EnvironmentAuthInvalidError",
		code: "auth_invalid",
		reason,
		traceId: traceId(),
	});

const scopeRequired = (requiredScope: string) =>
	json(403, {
		_tag: "EnvironmentScopeRequiredError",
		code: "insufficient_scope",
		requiredScope,
		traceId: traceId(),
	});

const notFound = (reason: string) =>
	json(404, {
		_tag: "EnvironmentResourceNotFoundError",
		code: "not_found",
		reason,
		traceId: traceId(),
	});

const badRequest = (reason: string) =>
	json(400, {
		_tag: "EnvironmentRequestInvalidError",
		code: "invalid_request",
		reason,
		traceId: traceId(),
	});

const THREAD_ROUTE = /^\/api\/orchestration\/threads\/([^/]+)$/;

/**
 * Answers one request. `shown` hears which threads' current state the answer carries (a
 * projection, or the shell snapshot's threads): the caller notes them as sent once it is.
 */
export function handleHttp(
	ctx: SimContext,
	request: Request,
	shown: (threadIds: string[]) => void = () => {},
): Response {
	const url = new URL(request.url);
	const path = url.pathname;
	const method = request.method;
	const token = bearerOf(request);
	const session = ctx.auth.verify(token);

	if (method === "GET" && path === "/.well-known/t3/environment") {
		ctx.count("GET /.well-known/t3/environment");
		return json(200, environmentDescriptor(ctx));
	}
	if (method === "GET" && path === "/api/auth/session") {
		ctx.count("GET /api/auth/session");
		// Always 200: a bad token reads as authenticated:false, not 401 (PROTOCOL.md §2.5).
		if (!session)
			return json(200, { authenticated: false, auth: AUTH_DESCRIPTOR });
		return json(200, {
			authenticated: true,
			auth: AUTH_DESCRIPTOR,
			scopes: session.scopes,
			sessionMethod: "bearer-access-token",
			expiresAt: session.expiresAt,
		});
	}
	if (method === "POST" && path === "/api/auth/websocket-ticket") {
		ctx.count("POST /api/auth/websocket-ticket");
		if (token === undefined) return authInvalid("missing_credential");
		const ticket = ctx.auth.mintTicket(token);
		if (!ticket) return authInvalid("invalid_credential");
		return json(200, ticket, { "Cache-Control": "no-store" });
	}
	const threadMatch = path.match(THREAD_ROUTE);
	if (
		method === "GET" &&
		(path === "/api/orchestration/shell" || threadMatch)
	) {
		ctx.count(
			threadMatch
				? "GET /api/orchestration/threads/:id"
				: "GET /api/orchestration/shell",
		);
		if (token === undefined) return authInvalid("missing_credential");
		if (!session) return authInvalid("invalid_credential");
		if (!session.scopes.includes(READ_SCOPE)) return scopeRequired(READ_SCOPE);
		if (ctx.protocol === 1) return v1Read(ctx, threadMatch?.[1], shown);
		// The header is a schema literal on V2 routes (PROTOCOL.md §1.2; status per §1.3, inferred 400).
		if (request.headers.get("x-t3-orchestration-protocol") !== "2")
			return badRequest("missing_orchestration_protocol_header");
		if (!threadMatch) {
			const snapshot = ctx.store.shellSnapshot();
			shown((snapshot.threads as { id: string }[]).map((t) => t.id));
			return json(200, snapshot);
		}
		const thread = ctx.store.threads.get(
			decodeURIComponent(threadMatch[1] ?? ""),
		);
		if (!thread || thread.app.deletedAt) return notFound("thread_not_found");
		shown([thread.id]);
		return json(200, {
			snapshotSequence: thread.lastSequence,
			projection: ctx.store.projection(thread),
		});
	}
	if (
		ctx.protocol === 1 &&
		method === "GET" &&
		path === "/api/orchestration/snapshot"
	) {
		if (!session)
			return authInvalid(
				token === undefined ? "missing_credential" : "invalid_credential",
			);
		return json(200, v1Shell(ctx));
	}
	// Counted, so tests can tell that nothing strayed outside the routes (a `..` id).
	ctx.count(`${method} ${path} (no route)`);
	return json(404, {
		_tag: "NotFound",
		message: `No route for ${method} ${path}`,
	});
}

function v1Read(
	ctx: SimContext,
	threadId: string | undefined,
	shown: (threadIds: string[]) => void,
): Response {
	const shell = v1Shell(ctx);
	const threads = shell.threads as { id: string }[];
	if (threadId === undefined) {
		shown(threads.map((t) => t.id));
		return json(200, shell);
	}
	const thread = threads.find((t) => t.id === decodeURIComponent(threadId));
	if (!thread) return notFound("thread_not_found");
	shown([thread.id]);
	return json(200, { snapshotSequence: shell.snapshotSequence, thread });
}
