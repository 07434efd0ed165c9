/**
 * Timers for the simulator's pacing, tracked so `stop()` can cancel every one of them and
 * `bun test` exits. `sleep` rejects with `Cancelled` when its signal aborts, which is how an
 * interrupted or cancelled run's scripted agent stops mid-step.
 */

export class Cancelled extends Error {
	constructor() {
		super("cancelled");
		this.name = "Cancelled";
	}
}

export interface Scheduler {
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
	/** Runs `fn` after `ms`; returns a function that cancels it. */
	later(ms: number, fn: () => void): () => void;
	cancelAll(): void;
}

export function createScheduler(): Scheduler {
	const timers = new Set<ReturnType<typeof setTimeout>>();

	function later(ms: number, fn: () => void): () => void {
		const timer = setTimeout(() => {
			timers.delete(timer);
			fn();
		}, ms);
		timers.add(timer);
		return () => {
			clearTimeout(timer);
			timers.delete(timer);
		};
	}

	function sleep(ms: number, signal?: AbortSignal): Promise<void> {
		return new Promise((resolve, reject) => {
			if (signal?.aborted) return reject(new Cancelled());
			const timer = setTimeout(() => {
				timers.delete(timer);
				signal?.removeEventListener("abort", onAbort);
				resolve();
			}, ms);
			timers.add(timer);
			function onAbort() {
				clearTimeout(timer);
				timers.delete(timer);
				reject(new Cancelled());
			}
			signal?.addEventListener("abort", onAbort, { once: true });
		});
	}

	return {
		sleep,
		later,
		cancelAll() {
			for (const timer of timers) clearTimeout(timer);
			timers.clear();
		},
	};
}
