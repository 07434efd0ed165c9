/**
 * Large answers leave young garbage behind faster than the engine collects it. JavaScriptCore
 * lets the young generation grow to about the old generation's size before collecting it: with
 * 100 000 threads held that is ~70 MB, ~100 `t3_machines` answers of 500 machines (their JSON,
 * the text copy, the serialised body), and resident memory grew by that much under a burst of
 * calls. Looked at after MCP requests, in the next task (one read of resident memory, ~10 µs):
 * once it has grown at all since the last collection, the young generation is collected (a few
 * milliseconds, not a full collection's tens), so the memory is reused instead of added. An
 * allowance of 16 MB, looked at every 50 ms, let it grow by that much at every step: 500
 * machines' resident memory after the scale bench's calls was 182–192 MB against 175–176 with none,
 * and the calls were no slower (a young collection is over before the next request).
 */
import { edenGC } from "bun:jsc";

export interface YoungCollectorOptions {
	/** Resident growth after which the young generation is collected (default 0: any). */
	growthBytes?: number;
	/** The process's resident memory (default `memoryUsage.rss()`). */
	residentSize?: () => number;
	/** A collection of the young generation (default bun:jsc `edenGC`). */
	collectYoung?: () => void;
	/** Runs `fn` after the current task (default `setImmediate`). */
	later?: (fn: () => void) => void;
	/** Looks at most this often (default 0: after every task with requests). */
	minIntervalMs?: number;
	/** Milliseconds, monotonic (default `performance.now()`). */
	now?: () => number;
}

export function createYoungCollector(options: YoungCollectorOptions = {}): {
	/** After a request: soon, collect if memory grew past the allowance. */
	noteRequest(): void;
} {
	const growth = options.growthBytes ?? 0;
	const resident = options.residentSize ?? (() => process.memoryUsage.rss());
	const collectYoung = options.collectYoung ?? (() => edenGC());
	const later = options.later ?? ((fn) => setImmediate(fn));
	const minInterval = options.minIntervalMs ?? 0;
	const now = options.now ?? (() => performance.now());
	let lookedAt = Number.NEGATIVE_INFINITY;
	// Read at the first request, not here: made just before `Bun.serve` listens, a read here
	// changed the error code Bun gives for an address it cannot listen on (cli.test.ts).
	let floor: number | undefined;
	let queued = false;
	const check = () => {
		queued = false;
		lookedAt = now();
		const rss = resident();
		if (floor === undefined || rss < floor) {
			floor = rss;
			return;
		}
		if (rss - floor <= growth) return;
		collectYoung();
		floor = resident();
	};
	return {
		noteRequest() {
			// Looked at in the next task, once for the requests of one task (and at most every
			// `minIntervalMs`): off the answer's path.
			if (queued || now() - lookedAt < minInterval) return;
			queued = true;
			later(check);
		},
	};
}
