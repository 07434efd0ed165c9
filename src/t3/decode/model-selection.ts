/** A model selection (PROTOCOL.md §9), as threads, projects and runs carry it. */
import type { ModelSelection } from "../model.ts";
import { isRecord, str } from "./json.ts";

export function decodeModelSelection(raw: unknown): ModelSelection | null {
	if (!isRecord(raw)) return null;
	// Legacy `{provider, model}` is promoted to instanceId (PROTOCOL.md §9).
	const instanceId = str(raw.instanceId) ?? str(raw.provider) ?? "";
	const model = str(raw.model) ?? "";
	const out: ModelSelection = { ...raw, instanceId, model };
	if (Array.isArray(raw.options)) {
		out.options = raw.options.filter(
			(o): o is { id: string; value: string | boolean } =>
				isRecord(o) &&
				typeof o.id === "string" &&
				(typeof o.value === "string" || typeof o.value === "boolean"),
		);
	} else if (isRecord(raw.options)) {
		out.options = Object.entries(raw.options)
			.filter(([, v]) => typeof v === "string" || typeof v === "boolean")
			.map(([id, value]) => ({ id, value: value as string | boolean }));
	} else {
		delete out.options;
	}
	return out;
}
