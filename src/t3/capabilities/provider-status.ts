/**
 * Each provider instance's status as T3 last pushed it on `subscribeServerConfig` (the
 * `snapshot`'s `config.providers`, then every `providerStatuses` item, which carries the full
 * list: USAGE-AND-QUEUES.md §1.2): whether it can run now, and its usage limits
 * (`usageLimits`, §1.1). Decoded leniently: unknown keys and kinds are tolerated, a window
 * without `usedPercent` is unknown (never 0 %), a missing `usageLimits` is "reports none".
 * Labels and messages are T3's text: masked and capped. Pure; no MCP.
 */
import { redact } from "../../util/redact.ts";
import { isRecord } from "../decode/json.ts";
import { readiness } from "./catalog.ts";

export const USAGE_WINDOW_KINDS = [
	"session",
	"weekly",
	"monthly",
	"other",
] as const;
export type UsageWindowKind = (typeof USAGE_WINDOW_KINDS)[number];

export interface UsageWindow {
	/** T3's stable id of the window (`five_hour`, `primary`); null when it sent none. */
	id: string | null;
	/** A kind this connector does not know is `other` ("only orders and labels the bar"). */
	kind: UsageWindowKind;
	label: string;
	/** 0–100; null when T3 did not say (unknown, not 0 %). */
	usedPercent: number | null;
	resetsAt: string | null;
}

export interface ProviderUsage {
	checkedAt: string | null;
	windows: UsageWindow[];
	/** Why T3 has no windows: `unsupported` (never) or `probeFailed` (the last probe failed). */
	unavailable: { reason: string; message: string | null } | null;
}

export interface ProviderStatus {
	instanceId: string;
	driver: string | null;
	ready: boolean;
	/** Why it cannot run (or its warning); null when all is well. */
	reason: string | null;
	/** Null: T3 reports no usage for it (a driver without a notion of subscription usage). */
	usage: ProviderUsage | null;
}

/** Labels are short on T3's side; anything longer is cut here. */
const LABEL_MAX = 80;

const str = (v: unknown): string | undefined =>
	typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;

const iso = (v: unknown): string | null => {
	const s = str(v);
	return s !== undefined && Number.isFinite(Date.parse(s)) ? s : null;
};

function decodeWindow(raw: unknown): UsageWindow | undefined {
	if (!isRecord(raw)) return undefined;
	const kind = (USAGE_WINDOW_KINDS as readonly string[]).includes(
		String(raw.kind),
	)
		? (raw.kind as UsageWindowKind)
		: "other";
	const used = raw.usedPercent;
	const id = str(raw.id) ?? null;
	return {
		id: id === null ? null : redact(id, LABEL_MAX),
		kind,
		label: redact(str(raw.label) ?? id ?? kind, LABEL_MAX),
		usedPercent:
			typeof used === "number" && Number.isFinite(used)
				? Math.min(100, Math.max(0, used))
				: null,
		resetsAt: iso(raw.resetsAt),
	};
}

function decodeUsage(
	raw: unknown,
	previous: ProviderUsage | null | undefined,
): ProviderUsage | null {
	if (!isRecord(raw)) return null;
	const windows = (Array.isArray(raw.windows) ? raw.windows : [])
		.map(decodeWindow)
		.filter((w): w is UsageWindow => w !== undefined);
	const u = isRecord(raw.unavailable) ? raw.unavailable : undefined;
	const unavailable = u
		? {
				reason: redact(str(u.reason) ?? "unknown", LABEL_MAX),
				message:
					str(u.message) === undefined ? null : redact(String(u.message)),
			}
		: null;
	// A failed probe keeps the last good bars (T3: "failed probes never imply an unused allowance").
	const kept =
		unavailable?.reason === "probeFailed" && windows.length === 0
			? (previous?.windows ?? [])
			: windows;
	return { checkedAt: iso(raw.checkedAt), windows: kept, unavailable };
}

/** The provider list of a config snapshot or a `providerStatuses` item; malformed rows skipped. */
export function decodeProviderStatuses(
	providers: unknown,
	previous: readonly ProviderStatus[] | null = null,
): ProviderStatus[] {
	const before = new Map(previous?.map((p) => [p.instanceId, p]));
	const out: ProviderStatus[] = [];
	for (const p of Array.isArray(providers) ? providers : []) {
		if (!isRecord(p)) continue;
		const instanceId = str(p.instanceId) ?? str(p.provider);
		if (!instanceId) continue;
		out.push({
			instanceId,
			driver: str(p.driver) ?? null,
			...readiness({ ...p, instanceId }),
			usage: decodeUsage(p.usageLimits, before.get(instanceId)?.usage),
		});
	}
	return out;
}

let version = 0;
/** Changes whenever any machine's provider statuses change (what a kept answer compares). */
export const providerStatusVersion = (): number => version;
export const noteProviderStatuses = (): void => {
	version += 1;
};
