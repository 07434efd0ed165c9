/**
 * Room `pool/`: the machines as one pool (CONTRACT.md "One pool"): each machine's busy threads
 * and cap (capacity.ts), its providers' usage (this file) and where a new thread goes
 * (placement.ts). Beneath `threads/`, above `t3/`, `store/` and `rights/`; never imports
 * `tools/`, `mcp/`, `http/` or `console/`.
 */
/**
 * Provider usage as the contract shows it (`t3_machines` / `t3_usage` `usage`), and the two
 * judgments placement makes of it: whether a provider's window is used up (≥ 100 % with its
 * reset ahead or unknown) and how used it is (the highest of its windows; null = unknown, never
 * 0 %). A machine whose T3 reports no usage (the pre-release engine) shows `[]`.
 */
import type {
	ProviderStatus,
	UsageWindow,
} from "../t3/capabilities/provider-status.ts";
import type { Machine } from "../t3/machine-api.ts";

export interface UsageRow {
	provider: string;
	ready: boolean;
	windows: {
		kind: string;
		label: string;
		used_percent: number | null;
		resets_at: string | null;
	}[];
	unavailable: { reason: string; message: string | null } | null;
	checked_at: string | null;
}

/** Rows per provider list (a machine replaces its list on every update, never changes it). */
const rowsOf = new WeakMap<readonly ProviderStatus[], UsageRow[]>();

const NONE: UsageRow[] = [];

/** The machine's usage rows: providers whose T3 reports usage limits, in T3's order. */
export function usageRows(machine: Machine): UsageRow[] {
	const providers = machine.providers?.() ?? null;
	if (providers === null) return NONE;
	let rows = rowsOf.get(providers);
	if (!rows) {
		rows = providers
			.filter((p) => p.usage !== null)
			.map((p) => ({
				provider: p.instanceId,
				ready: p.ready,
				windows: (p.usage?.windows ?? []).map((w) => ({
					kind: w.kind,
					label: w.label,
					used_percent: w.usedPercent,
					resets_at: w.resetsAt,
				})),
				unavailable: p.usage?.unavailable ?? null,
				checked_at: p.usage?.checkedAt ?? null,
			}));
		rowsOf.set(providers, rows);
	}
	return rows;
}

/** A window used up now: at 100 % with its reset ahead, or with no reset time. */
export function usedUpWindow(
	status: ProviderStatus,
	now: number,
): UsageWindow | undefined {
	return status.usage?.windows.find(
		(w) =>
			w.usedPercent !== null &&
			w.usedPercent >= 100 &&
			(w.resetsAt === null || Date.parse(w.resetsAt) > now),
	);
}

/** The highest `used_percent` of the provider's windows; null when none is known. */
export function highestUsed(status: ProviderStatus | undefined): number | null {
	let high: number | null = null;
	for (const w of status?.usage?.windows ?? [])
		if (w.usedPercent !== null && (high === null || w.usedPercent > high))
			high = w.usedPercent;
	return high;
}
