/**
 * Answers read from a T3 machine for a listing, kept by key per machine object (a machine
 * removed from the config takes its answers with it), at most `limit` per machine, oldest first
 * out: what `t3_threads` reads once per run or request so that listing again costs nothing.
 */
import type { Machine } from "../../t3/machine-api.ts";

export interface PerMachineMemo<V> {
	get(machine: Machine, key: string): V | undefined;
	set(machine: Machine, key: string, value: V): void;
}

export function perMachineMemo<V>(limit = 1_000): PerMachineMemo<V> {
	const byMachine = new WeakMap<Machine, Map<string, V>>();
	return {
		get: (machine, key) => byMachine.get(machine)?.get(key),
		set(machine, key, value) {
			let kept = byMachine.get(machine);
			if (!kept) {
				kept = new Map();
				byMachine.set(machine, kept);
			}
			kept.delete(key); // a fresh answer counts as the newest
			kept.set(key, value);
			if (kept.size > limit) {
				const oldest = kept.keys().next().value;
				if (oldest !== undefined) kept.delete(oldest);
			}
		},
	};
}
