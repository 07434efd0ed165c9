/**
 * An outgoing request's deadline: an abort signal that fires after `ms`, and is let go as soon as
 * the request is done. `AbortSignal.timeout()` keeps its timer (and the signal) alive for the
 * whole timeout after the answer came: at hundreds of T3 reads or webhook posts a second, that
 * is thousands of pending 15 s timers.
 */
import { type Clock, systemClock } from "./clock.ts";

export interface RequestDeadline {
	signal: AbortSignal;
	/** The request is over (answered or failed): the timer goes. */
	done(): void;
}

export function requestDeadline(
	ms: number,
	clock: Clock = systemClock,
): RequestDeadline {
	const controller = new AbortController();
	const cancel = clock.setTimer(
		() =>
			controller.abort(
				new DOMException(`timed out after ${ms} ms`, "TimeoutError"),
			),
		ms,
	);
	return { signal: controller.signal, done: cancel };
}
