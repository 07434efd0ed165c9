/**
 * Starts the T3 read a `t3_thread` call will need as soon as its HTTP request is parsed, and
 * hands it to that call's handler (keyed by the request object, so it never serves another
 * request). See src/threads/read/read-ahead.ts for why.
 */
import type { Services } from "../services.ts";
import {
	startThreadRead,
	type ThreadReadAhead,
} from "../threads/read/read-ahead.ts";

const started = new WeakMap<Request, ThreadReadAhead>();

const isObject = (v: unknown): v is Record<string, unknown> =>
	typeof v === "object" && v !== null && !Array.isArray(v);

/** Starts the read when the request is a `t3_thread` call; returns it (or undefined). */
export function startReadAhead(
	request: Request,
	message: unknown,
	services: Services,
): ThreadReadAhead | undefined {
	if (!isObject(message) || message.method !== "tools/call") return undefined;
	const params = message.params;
	if (!isObject(params) || params.name !== "t3_thread") return undefined;
	const args = params.arguments;
	if (!isObject(args)) return undefined;
	const ahead = startThreadRead(services.threadDeps, args.thread_id);
	if (ahead) started.set(request, ahead);
	return ahead;
}

/** The read started for this request, once. */
export function takeReadAhead(
	request: Request | undefined,
): ThreadReadAhead | undefined {
	if (!request) return undefined;
	const ahead = started.get(request);
	started.delete(request);
	return ahead;
}
