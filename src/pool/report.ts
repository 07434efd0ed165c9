/**
 * What `t3_machines` and `t3_usage` show of the pool (CONTRACT.md "One pool"): each machine's
 * busy threads against its cap, the held dispatches only it can take and its providers' usage;
 * each client's busy threads against its own cap, and its held dispatches.
 */
import type { ClientConfig } from "../config/types.ts";
import type { FleetMachine } from "../fleet/fleet.ts";
import type { CountedThread, RunSlots } from "../rights/run-slots.ts";
import { activeRuns } from "./capacity.ts";
import type { Holding } from "./hold.ts";
import { type UsageRow, usageRows } from "./usage.ts";

export interface MachinePool {
	active_runs: number;
	max_active_runs: number | null;
	held: number;
	usage: UsageRow[];
}

export function machinePool(
	ledger: RunSlots,
	entry: FleetMachine,
	holding?: Holding,
): MachinePool {
	return {
		active_runs: activeRuns(ledger, entry),
		max_active_runs: entry.config.maxActiveRuns ?? null,
		held: holding?.onlyFor(entry.config.name) ?? 0,
		usage: usageRows(entry.machine),
	};
}

export interface ClientPool {
	name: string;
	active_runs: number;
	max_active_runs: number | null;
	held: number;
}

/** A client's busy threads (the ones its dispatches started), reservations included. */
export function clientPool(
	ledger: RunSlots,
	client: ClientConfig,
	threads: (client: string) => Iterable<CountedThread>,
	holding?: Holding,
): ClientPool {
	return {
		name: client.name,
		active_runs: ledger.count({
			key: `client:${client.name}`,
			threads: () => threads(client.name),
		}),
		max_active_runs: client.maxActiveRuns,
		held: holding?.count(client.name) ?? 0,
	};
}
