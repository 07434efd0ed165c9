/**
 * A `t3_thread` answer leaves in one piece. The SDK hands back a tool call's SSE response as soon
 * as the call is under way, and Bun writes its status line and first headers at once; the rest
 * follows with the result once T3 has answered: two writes, the client woken twice. For a read
 * whose T3 request is already in flight, the response is held until that request settles, then
 * one event-loop turn more, by which time the result is in the stream, so everything goes out in
 * one write. On the 2-core bench the client then does nothing while the connector's T3 read is
 * under way, and the read (and `t3_thread`) finishes sooner: overhead 1.03–1.08× against
 * 1.07–1.10× before.
 *
 * Held at most `maxMs` (1 s): far under any client's first-byte limit (60 s and more) and Bun's
 * idle timer; after it the response goes as before and the keep-alive comments flow.
 */
import { type Clock, systemClock } from "../util/clock.ts";

export const HOLD_MAX_MS = 1_000;

export async function holdUntilSettled(
	response: Response,
	work: Promise<unknown>,
	options: { maxMs?: number; clock?: Clock } = {},
): Promise<Response> {
	const clock = options.clock ?? systemClock;
	let cancel: (() => void) | undefined;
	const capped = new Promise<void>((resolve) => {
		cancel = clock.setTimer(resolve, options.maxMs ?? HOLD_MAX_MS);
	});
	await Promise.race([
		work.then(
			() => {},
			() => {},
		),
		capped,
	]);
	cancel?.();
	// The handler's remaining steps (shaping, the SDK writing the result) are microtasks.
	await new Promise<void>((resolve) => setImmediate(resolve));
	return response;
}
