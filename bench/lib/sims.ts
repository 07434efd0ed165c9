/** Simulators in this process (so the send tap can stamp their frames), stopped as a group. */
import { type Sim, type SimOptions, startSim } from "../../src/sim/index.ts";
import type { SimRef } from "./rpc.ts";

export interface SimGroup {
	sims: Sim[];
	refs: SimRef[];
	stop(): Promise<void>;
}

export async function startSims(
	count: number,
	options: SimOptions,
): Promise<SimGroup> {
	const sims: Sim[] = [];
	for (let i = 0; i < count; i++) sims.push(await startSim({ ...options }));
	return {
		sims,
		refs: sims.map((s, i) => ({
			name: `m${String(i + 1).padStart(2, "0")}`,
			url: s.url,
			token: s.token,
		})),
		stop: async () => {
			await Promise.all(sims.map((s) => s.stop()));
		},
	};
}
