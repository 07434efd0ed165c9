/** Fan-out to listeners that must not break each other or their caller. */
import type { Logger } from "./log.ts";

/**
 * Calls every listener with `value` (over a copy, so a listener may unsubscribe); one that throws
 * is logged as `<what> listener threw` and the rest still hear it.
 */
export function notifyAll<T>(
	listeners: Iterable<(value: T) => void>,
	value: T,
	log: Logger,
	what: string,
): void {
	for (const listener of [...listeners]) {
		try {
			listener(value);
		} catch (err) {
			log.error(`${what} listener threw`, { err });
		}
	}
}
