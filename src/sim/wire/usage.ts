/**
 * Provider usage limits as the simulator reports them (`sim --usage`, `Sim.setUsage`): each
 * provider's `usageLimits {checkedAt, windows: [{id, kind, label, usedPercent, resetsAt?}]}`
 * in `server.getConfig` and on `providerStatuses` (USAGE-AND-QUEUES.md §1.1). A run that hits
 * the usage limit puts that provider's session window at 100 % until its reset. The
 * pre-release engine reports no usage at all (no `usageLimits` key).
 */
import { simHas } from "../compat.ts";
import type { SimContext } from "../context.ts";
import { notifyProviders } from "./config-stream.ts";

export interface SimUsageWindow {
	/** A provider instance id (`claudeAgent`, `codex`, …). */
	provider: string;
	/** `session | weekly | monthly | other` (any text: T3's newer kinds). */
	kind: string;
	usedPercent: number;
	/** Minutes from now to the window's reset; absent = T3 says no reset time. */
	resetsInMin?: number;
	label?: string;
}

const LABELS: Record<string, string> = {
	session: "Session",
	weekly: "Weekly",
	monthly: "Monthly",
};

function row(w: Omit<SimUsageWindow, "provider">, now: number) {
	return {
		id: w.kind === "session" ? "five_hour" : `${w.kind}`,
		kind: w.kind,
		label: w.label ?? LABELS[w.kind] ?? w.kind,
		usedPercent: w.usedPercent,
		...(w.resetsInMin === undefined
			? {}
			: { resetsAt: new Date(now + w.resetsInMin * 60_000).toISOString() }),
	};
}

type Row = Record<string, unknown>;

function windowsOf(provider: Row): Row[] {
	const limits = provider.usageLimits as { windows?: Row[] } | undefined;
	return [...(limits?.windows ?? [])];
}

function setWindows(
	ctx: SimContext,
	instanceId: string,
	windows: Row[] | null,
	notify: boolean,
): void {
	const provider = ctx.config.providers.find(
		(p) => p.instanceId === instanceId,
	);
	if (!provider) throw new Error(`sim: no provider instance ${instanceId}`);
	if (!simHas(ctx.compat, "usageLimits")) return;
	if (windows === null) delete provider.usageLimits;
	else
		provider.usageLimits = {
			checkedAt: new Date().toISOString(),
			windows,
		};
	if (notify) notifyProviders(ctx);
}

/**
 * Sets windows (by kind: a window of the same kind is replaced, others kept), or `null` for a
 * provider that reports none. Subscribers hear of it unless `notify` is false.
 */
export function setUsage(
	ctx: SimContext,
	instanceId: string,
	windows: Omit<SimUsageWindow, "provider">[] | null,
	notify = true,
): void {
	if (windows === null) {
		setWindows(ctx, instanceId, null, notify);
		return;
	}
	const now = Date.now();
	const provider = ctx.config.providers.find(
		(p) => p.instanceId === instanceId,
	);
	const rows = provider ? windowsOf(provider) : [];
	for (const w of windows) {
		const at = rows.findIndex((r) => r.kind === w.kind);
		if (at >= 0) rows[at] = row(w, now);
		else rows.push(row(w, now));
	}
	setWindows(ctx, instanceId, rows, notify);
}

/** The usage-limit prompt hit: the provider's session window at 100 % until `resetAt`. */
export function hitUsageLimit(
	ctx: SimContext,
	instanceId: string,
	resetAt: string,
): void {
	const provider = ctx.config.providers.find(
		(p) => p.instanceId === instanceId,
	);
	if (!provider || !simHas(ctx.compat, "usageLimits")) return;
	const rows = windowsOf(provider);
	const at = rows.findIndex((r) => r.kind === "session");
	const before = at >= 0 ? rows[at] : undefined;
	const full = {
		id: before?.id ?? "five_hour",
		kind: "session",
		label: before?.label ?? "Session",
		usedPercent: 100,
		resetsAt: resetAt,
	};
	if (at >= 0) rows[at] = full;
	else rows.push(full);
	setWindows(ctx, instanceId, rows, true);
	ctx.scheduler.later(Math.max(0, Date.parse(resetAt) - Date.now()), () => {
		const now = windowsOf(provider);
		const i = now.findIndex((r) => r.kind === "session");
		if (i < 0 || now[i]?.resetsAt !== resetAt) return;
		now[i] = { ...full, usedPercent: 0, resetsAt: undefined };
		delete (now[i] as Row).resetsAt;
		setWindows(ctx, instanceId, now, true);
	});
}

/** The `--usage` / `usage` option applied at start (no subscriber yet). */
export function applyUsageOption(
	ctx: SimContext,
	windows: SimUsageWindow[] | undefined,
): void {
	const byProvider = new Map<string, Omit<SimUsageWindow, "provider">[]>();
	for (const { provider, ...w } of windows ?? [])
		byProvider.set(provider, [...(byProvider.get(provider) ?? []), w]);
	for (const [provider, list] of byProvider)
		setUsage(ctx, provider, list, false);
}
