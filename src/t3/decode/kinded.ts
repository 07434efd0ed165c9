/** The frame of every stream item decoder: an object with a `kind`, unknown kinds reported once. */
import type { Logger } from "../../util/log.ts";
import { isRecord, str } from "./json.ts";

/** Logs an unknown `kind` once per kind, so a chatty newer server does not flood the log. */
export function createUnknownKindReporter(
	log: Logger,
	what: string,
): (kind: string) => void {
	const seen = new Set<string>();
	return (kind) => {
		if (seen.has(kind)) return;
		seen.add(kind);
		log.warn(`ignoring unknown ${what} kind`, { kind });
	};
}

/**
 * The common frame of a stream item decoder: an object with a `kind`, decoded by `decode`;
 * an unknown kind (undefined from `decode`) or a malformed item becomes `{kind: "unknown"}`
 * and is reported, never thrown.
 */
export function decodeKinded<T>(
	raw: unknown,
	onUnknown: ((kind: string) => void) | undefined,
	decode: (kind: string, raw: Record<string, unknown>) => T | undefined,
): T | { kind: "unknown"; raw: unknown } {
	const unknown = (kind: string) => {
		onUnknown?.(kind);
		return { kind: "unknown" as const, raw };
	};
	if (!isRecord(raw)) return unknown("<not an object>");
	const kind = str(raw.kind) ?? "<missing>";
	try {
		return decode(kind, raw) ?? unknown(kind);
	} catch {
		return unknown(`malformed ${kind}`);
	}
}
