/**
 * The T3 HTTP surface the connector reads (PROTOCOL.md §1, §2.5, §3): descriptor, auth
 * session, websocket ticket, shell and thread snapshots. Every failure becomes a T3Error
 * whose message names the URL and the cause but never the token.
 */

import { type Clock, systemClock } from "../../util/clock.ts";
import { redact, urlShown } from "../../util/redact.ts";
import { requestDeadline } from "../../util/request-deadline.ts";
import {
	decodeAuthSession,
	decodeDescriptor,
	decodeTicket,
} from "../decode/connect.ts";
import { decodeThreadDetail } from "../decode/projection.ts";
import { decodeShellSnapshot } from "../decode/shell.ts";
import { T3Error } from "../machine-api.ts";
import type {
	AuthSession,
	EnvironmentDescriptor,
	ShellSnapshot,
	ThreadDetail,
} from "../model.ts";
import { pathSegment } from "./path-segment.ts";

export type FetchLike = (
	url: string | URL,
	init?: RequestInit,
) => Promise<Response>;

export interface T3HttpOptions {
	/** http(s) origin, no trailing slash. */
	url: string;
	/** A function when the token can change between connects (a re-read token file). */
	token: string | undefined | (() => string | undefined);
	fetch?: FetchLike;
	timeoutMs?: number;
	/** Times each request's deadline (tests move it instead of waiting). */
	clock?: Clock;
}

export interface T3Http {
	descriptor(): Promise<EnvironmentDescriptor>;
	authSession(): Promise<AuthSession>;
	websocketTicket(): Promise<{ ticket: string; expiresAt: string | null }>;
	shell(): Promise<ShellSnapshot>;
	thread(threadId: string): Promise<ThreadDetail>;
}

const PROTOCOL_HEADER = "x-t3-orchestration-protocol";

function causeText(err: unknown): string {
	if (err instanceof Error) {
		const code = (err as { code?: unknown }).code;
		return typeof code === "string" && !err.message.includes(code)
			? `${err.message} (${code})`
			: err.message;
	}
	return String(err);
}

function isTimeout(err: unknown): boolean {
	return (
		err instanceof Error &&
		(err.name === "TimeoutError" || err.name === "AbortError")
	);
}

/** A short, token-free description of an error body (`_tag`, `reason`, `requiredScope`). */
function bodySummary(body: unknown): string {
	if (typeof body !== "object" || body === null) return "";
	const b = body as Record<string, unknown>;
	const parts = [
		b._tag,
		b.code,
		b.reason,
		b.requiredScope ? `requires ${b.requiredScope}` : undefined,
		b.message,
	]
		.filter((p): p is string => typeof p === "string" && p.length > 0)
		// Masked before the cut, so a secret straddling it leaves nothing behind.
		.map((p) => redact(p, 200));
	return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}

interface Answer {
	body: unknown;
	/** The text of an error status (for its excerpt); empty for a success. */
	text: string;
	/** False when the body is not JSON. */
	parsed: boolean;
}

async function readAnswer(res: Response): Promise<Answer> {
	if (res.status >= 200 && res.status < 300) {
		// Parsed from the bytes (about half the time of text() + JSON.parse for a thread's
		// projection, on every t3_thread's critical path); a success that is not JSON is refused
		// by the caller without its text.
		try {
			return { body: await res.json(), text: "", parsed: true };
		} catch (err) {
			if (!(err instanceof SyntaxError)) throw err;
			return { body: undefined, text: "", parsed: false };
		}
	}
	const text = await res.text();
	try {
		return {
			body: text.length > 0 ? JSON.parse(text) : undefined,
			text,
			parsed: true,
		};
	} catch {
		return { body: undefined, text, parsed: false };
	}
}

export function createT3Http(options: T3HttpOptions): T3Http {
	const base = options.url.replace(/\/+$/, "");
	const doFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
	const timeoutMs = options.timeoutMs ?? 15_000;
	const clock = options.clock ?? systemClock;
	const { token } = options;
	const tokenNow = typeof token === "function" ? token : () => token;

	async function call(
		method: "GET" | "POST",
		path: string,
		opts: { auth: boolean; orchestration?: boolean },
	): Promise<unknown> {
		const url = `${base}${path}`;
		// Messages name the URL, but never a huge one (an id is user input), nor its query.
		const shown = urlShown(url);
		const headers: Record<string, string> = { accept: "application/json" };
		const bearer = opts.auth ? tokenNow() : undefined;
		if (bearer) headers.authorization = `Bearer ${bearer}`;
		if (opts.orchestration) headers[PROTOCOL_HEADER] = "2";
		const failed = (err: unknown, what: string) =>
			isTimeout(err)
				? new T3Error(
						"TIMEOUT",
						`${method} ${shown} timed out after ${timeoutMs} ms`,
					)
				: new T3Error("UNREACHABLE", `${what}: ${causeText(err)}`);
		// Covers the answer's body too; let go as soon as it is read.
		const deadline = requestDeadline(timeoutMs, clock);
		let status: number;
		let answer: Answer;
		try {
			let res: Response;
			try {
				res = await doFetch(url, {
					method,
					headers,
					signal: deadline.signal,
				});
			} catch (err) {
				throw failed(err, `cannot reach ${shown}`);
			}
			status = res.status;
			answer = await readAnswer(res).catch((err) => {
				throw failed(err, `reading ${shown} failed`);
			});
		} finally {
			deadline.done();
		}
		const { body, text, parsed } = answer;
		if (status === 401) {
			throw new T3Error(
				"UNAUTHORIZED",
				`${shown} rejected the token (401)${bodySummary(body)}`,
				{ status, raw: body },
			);
		}
		if (status === 403) {
			throw new T3Error(
				"FORBIDDEN",
				`${shown} refused: insufficient scope (403)${bodySummary(body)}`,
				{
					status,
					raw: body,
				},
			);
		}
		if (status === 404) {
			throw new T3Error(
				"NOT_FOUND",
				`${shown} not found (404)${bodySummary(body)}`,
				{ status, raw: body },
			);
		}
		if (status === 426) {
			throw new T3Error(
				"INCOMPATIBLE",
				`${shown} needs another orchestration protocol (426)${bodySummary(body)}`,
				{
					status,
					raw: body,
				},
			);
		}
		if (status >= 500) {
			const detail = parsed
				? bodySummary(body)
				: text
					? ` (${redact(text, 200)})`
					: "";
			throw new T3Error(
				"SERVER_ERROR",
				`${shown} failed with ${status}${detail}`,
				{ status, raw: body },
			);
		}
		if (status < 200 || status >= 300) {
			throw new T3Error(
				"BAD_RESPONSE",
				`${shown} answered ${status}${bodySummary(body)}`,
				{ status, raw: body },
			);
		}
		if (!parsed || body === undefined) {
			throw new T3Error(
				"BAD_RESPONSE",
				`${shown} did not answer JSON (status ${status})`,
				{ status },
			);
		}
		return body;
	}

	return {
		descriptor: async () =>
			decodeDescriptor(
				await call("GET", "/.well-known/t3/environment", { auth: false }),
			),
		authSession: async () =>
			decodeAuthSession(await call("GET", "/api/auth/session", { auth: true })),
		websocketTicket: async () =>
			decodeTicket(
				await call("POST", "/api/auth/websocket-ticket", { auth: true }),
			),
		shell: async () =>
			decodeShellSnapshot(
				await call("GET", "/api/orchestration/shell", {
					auth: true,
					orchestration: true,
				}),
			),
		thread: async (threadId) =>
			decodeThreadDetail(
				await call(
					"GET",
					`/api/orchestration/threads/${pathSegment(
						threadId,
						(why) =>
							new T3Error(
								"INVALID_ID",
								`thread id ${JSON.stringify(threadId.slice(0, 200))} ${why}; nothing was sent`,
							),
					)}`,
					{
						auth: true,
						orchestration: true,
					},
				),
			),
	};
}
