/**
 * Room `t3/capabilities/`: what one T3 server can do, as it says or as we learn it: its model
 * catalog, how each provider steers, and whether it honours `deliveryIntent`. May import
 * `t3/decode`, `t3/model.ts` and `util/`.
 */
/**
 * The model catalog of one T3 server, decoded leniently from `server.getConfig` →
 * `providers[]` (PROTOCOL.md §9): each provider instance, whether it can run now (enabled,
 * installed, authenticated) and why not, whether it offers plan mode
 * (`showInteractionModeToggle`), and each model's option descriptors. Pure; no MCP.
 */
import { redact } from "../../util/redact.ts";
import { isRecord } from "../decode/json.ts";
import { driverSteer, type Steer, steerOf } from "./steering.ts";

export interface CatalogOption {
	id: string;
	label: string;
	type: "select" | "boolean";
	/** The choice ids of a select; empty for a boolean. */
	values: string[];
	default: string | boolean | null;
}

export interface CatalogModel {
	slug: string;
	name: string;
	options: CatalogOption[];
}

export interface CatalogProvider {
	instanceId: string;
	ready: boolean;
	/** Why the provider cannot run, or the warning T3 reports; null when all is well. */
	reason: string | null;
	planMode: boolean;
	/** How it takes a message while a run is going (steering.ts). */
	steer: Steer;
	models: CatalogModel[];
}

type Json = Record<string, unknown>;
const str = (v: unknown): string | undefined =>
	typeof v === "string" && v.trim() !== "" ? v : undefined;

function decodeOption(raw: unknown): CatalogOption | undefined {
	if (!isRecord(raw)) return undefined;
	const id = str(raw.id);
	if (!id) return undefined;
	const label = str(raw.label) ?? id;
	if (raw.type === "boolean") {
		const current = raw.currentValue;
		return {
			id,
			label,
			type: "boolean",
			values: [],
			default: typeof current === "boolean" ? current : null,
		};
	}
	if (raw.type !== "select") return undefined; // a descriptor type this connector cannot offer
	const choices = (Array.isArray(raw.options) ? raw.options : []).filter(
		isRecord,
	);
	const values = choices.map((c) => str(c.id)).filter((v) => v !== undefined);
	const marked = choices.find((c) => c.isDefault === true);
	const current = str(raw.currentValue) ?? str(marked?.id);
	return {
		id,
		label,
		type: "select",
		values,
		default: current ?? null,
	};
}

function decodeModel(raw: unknown): CatalogModel | undefined {
	if (!isRecord(raw)) return undefined;
	const slug = str(raw.slug);
	if (!slug) return undefined;
	const capabilities = isRecord(raw.capabilities) ? raw.capabilities : {};
	const descriptors = Array.isArray(capabilities.optionDescriptors)
		? capabilities.optionDescriptors
		: [];
	return {
		slug,
		name: str(raw.name) ?? slug,
		options: descriptors
			.map(decodeOption)
			.filter((o): o is CatalogOption => o !== undefined),
	};
}

/** Whether the provider can run a turn now, and the words for why not (or its warning). */
export function readiness(p: Json): { ready: boolean; reason: string | null } {
	const id = str(p.instanceId) ?? "provider";
	const message = str(p.message);
	// A provider's message is outside text: masked like any other (redact.ts).
	const explain = (why: string) =>
		redact(message ? `${why}: ${message}` : `${why}.`);
	const auth = isRecord(p.auth) ? str(p.auth.status) : undefined;
	if (p.enabled === false || p.status === "disabled")
		return {
			ready: false,
			reason: explain(`${id} is disabled on the machine`),
		};
	if (p.installed === false)
		return {
			ready: false,
			reason: explain(`${id} is not installed on the machine`),
		};
	if (auth === "unauthenticated")
		return {
			ready: false,
			reason: explain(`${id} is not authenticated on the machine`),
		};
	if (p.status === "error")
		return { ready: false, reason: explain(`${id} reports an error`) };
	return {
		ready: true,
		reason: p.status === "warning" && message ? redact(message) : null,
	};
}

/** The providers of a `server.getConfig` result; malformed entries are skipped. */
export function decodeCatalog(config: unknown): CatalogProvider[] {
	const providers =
		isRecord(config) && Array.isArray(config.providers) ? config.providers : [];
	const out: CatalogProvider[] = [];
	for (const p of providers) {
		if (!isRecord(p)) continue;
		const instanceId = str(p.instanceId) ?? str(p.provider);
		if (!instanceId) continue;
		out.push({
			instanceId,
			...readiness({ ...p, instanceId }),
			planMode: p.showInteractionModeToggle !== false,
			// The provider row says so on servers that put capabilities there; else its driver.
			steer:
				steerOf(isRecord(p.capabilities) ? p.capabilities.turns : undefined) ??
				driverSteer(str(p.driver)),
			models: (Array.isArray(p.models) ? p.models : [])
				.map(decodeModel)
				.filter((m): m is CatalogModel => m !== undefined),
		});
	}
	return out;
}
