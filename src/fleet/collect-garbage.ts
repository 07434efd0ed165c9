/**
 * Memory during start-up and reconnect storms. Each machine's shell snapshot and catch-up
 * leave garbage behind (parsed bodies, decoded shells, store rows, settled evaluations) faster
 * than the collector's own schedule returns it: with 50 machines and 10 000 threads the heap
 * and resident memory peaked ~25 MB above the settled size. A collection of the young
 * generation once resident memory has grown by `growthBytes` since the last one, checked at
 * every few snapshots or catch-ups, keeps the peak near the live size (the garbage is young:
 * what one snapshot was decoded from), and one full collection when the storm is over returns
 * the rest. Young, not full, during the storm: full collections of the growing heap were ~290 ms
 * of a 500-machine start's ~2.4 s on the main thread, the peak no lower. Resident memory, not
 * the heap's size: both `memorySize()` and `memoryUsage().heapUsed` walk the heap (~0.5 ms
 * with 100 000 threads held), `memoryUsage.rss()` is one read. Counted by growth, not by
 * snapshots: one every ten snapshots was ~100 collections of an 80 MB heap (30 ms each) while
 * 500 machines connected, most of the 5 s they took. Quiet machines never trigger one: idle CPU
 * is unchanged. The allowance shrinks as the fleet grows (`stormSchedule`).
 */
import { edenGC } from "bun:jsc";
import { unrefTimer } from "../util/clock.ts";
import type { Fleet } from "./fleet.ts";

export interface CollectOptions {
	/** A collection of the young generation, during a storm (default bun:jsc `edenGC`). */
	collect?: () => void;
	/** A full, synchronous collection, once the storm is over (default `Bun.gc(true)`). */
	collectFully?: () => void;
	/** Collect once memory has grown this much since the last collection (default: `stormSchedule`). */
	growthBytes?: number;
	/** The process's memory now, in bytes (default resident memory: `memoryUsage.rss()`). */
	memorySize?: () => number;
	/** Look at the memory at every this many snapshots or catch-ups (default: `stormSchedule`). */
	checkEvery?: number;
	/** Collect once this long after the last one (default 1 s). */
	quietMs?: number;
	/** Runs `fn` after `ms` (default an unref'd timer); returns a cancel function. */
	setTimer?: (fn: () => void, ms: number) => () => void;
}

/**
 * How much growth a storm of `machines` allows between young collections, and how often it is
 * looked at: 16 MB at every fourth snapshot or catch-up up to 50 machines, then less in
 * proportion, to 1 MB at every one. A 500-machine start peaked at 134–137 MB with 1 MB at every
 * one against 149–152 with 16 MB at every fourth (six starts, interleaved), and came online no
 * later; but a 50-machine start, short and waiting on its machines more than on the CPU, came
 * online ~25 % later with it and answered its first `/healthz` up to 200 ms after spawn.
 */
export function stormSchedule(machines: number): {
	growthBytes: number;
	checkEvery: number;
} {
	const scale = Math.max(1, machines / 50);
	return {
		growthBytes: Math.max(2 ** 20, Math.round((16 * 2 ** 20) / scale)),
		checkEvery: Math.max(1, Math.round(4 / scale)),
	};
}

/** Starts watching the fleet's machines; returns the stop function. */
export function collectDuringBursts(
	fleet: Fleet,
	options: CollectOptions = {},
): () => void {
	const collect = options.collect ?? (() => edenGC());
	const collectFully = options.collectFully ?? (() => Bun.gc(true));
	const schedule = stormSchedule(fleet.list().length);
	const growth = options.growthBytes ?? schedule.growthBytes;
	const memorySize = options.memorySize ?? (() => process.memoryUsage.rss());
	const checkEvery = options.checkEvery ?? schedule.checkEvery;
	const quietMs = options.quietMs ?? 1_000;
	const setTimer = options.setTimer ?? unrefTimer;
	let floor = memorySize();
	let seen = 0;
	let queued = false;
	const collectNow = (full: boolean) => {
		queued = false;
		(full ? collectFully : collect)();
		floor = memorySize();
	};
	let cancelQuiet: (() => void) | undefined;
	const stop = fleet.forEachMachine((entry) =>
		entry.machine.onChange((change) => {
			if (change.kind !== "snapshot" && change.kind !== "synchronized") return;
			// After the current task: what the snapshot was decoded from is unreachable by then.
			// Every few changes: each read is a call into the runtime, and a storm is thousands.
			seen += 1;
			if (
				!queued &&
				seen % checkEvery === 0 &&
				memorySize() - floor >= growth
			) {
				queued = true;
				queueMicrotask(() => collectNow(false));
			}
			cancelQuiet?.();
			cancelQuiet = setTimer(() => {
				cancelQuiet = undefined;
				collectNow(true);
			}, quietMs);
		}),
	);
	return () => {
		stop();
		cancelQuiet?.();
		cancelQuiet = undefined;
	};
}
