/**
 * The protocol-2 T3 Code simulator: a scriptable fake T3 server for integration tests and
 * the `demo` / `sim` commands. Only what is listed here is public.
 */
export { runSimCommand } from "./cli.ts";
export { startSim } from "./sim.ts";
export type {
	RunOutcomeTimes,
	Sim,
	SimFrame,
	SimOptions,
	SimProjectOption,
	SimStats,
	SimTokenOption,
} from "./types.ts";
