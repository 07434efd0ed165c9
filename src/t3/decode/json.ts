/**
 * Room `t3/decode/`: lenient decoders from T3's JSON to the read models of `t3/model.ts`, one file
 * per shape (connect, shell, projection, rows, streams, search, attachments), all built from the
 * primitives here. May import `t3/model.ts`, `t3/derive` and `util/`; never the connection.
 */
/**
 * The primitives every decoder is built from (PROTOCOL.md §7–§8): lenient readers of parsed JSON.
 * Unknown keys are kept on the object, unknown enum members stay plain strings, optional fields may
 * be absent. Only a missing id makes an object unusable (T3Error BAD_RESPONSE).
 */
import { T3Error } from "../machine-api.ts";

export type Json = Record<string, unknown>;

/** A JSON object (not null, not an array): the shape every decoder checks first. */
export function isRecord(value: unknown): value is Json {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
	return typeof value === "string" ? value : undefined;
}

export function strOrNull(value: unknown): string | null {
	return typeof value === "string" ? value : null;
}

export function num(value: unknown): number | undefined {
	return typeof value === "number" && Number.isFinite(value)
		? value
		: undefined;
}

export function arr(value: unknown): unknown[] {
	return Array.isArray(value) ? value : [];
}

export function bad(what: string, raw: unknown): T3Error {
	return new T3Error("BAD_RESPONSE", `malformed ${what} from the T3 server`, {
		raw,
	});
}

export function record(raw: unknown, what: string): Json {
	if (!isRecord(raw)) throw bad(what, raw);
	return raw;
}

export function requireId(obj: Json, what: string, key = "id"): string {
	const id = obj[key];
	if (typeof id === "string" && id.length > 0) return id;
	if (typeof id === "number") return String(id);
	throw new T3Error(
		"BAD_RESPONSE",
		`${what} without ${key} from the T3 server`,
		{ raw: obj },
	);
}

/** Decode every element, skipping (and reporting) the ones that fail instead of failing all. */
export function list<T>(
	value: unknown,
	decode: (raw: unknown) => T,
	onBad?: (err: unknown) => void,
): T[] {
	const out: T[] = [];
	for (const raw of arr(value)) {
		try {
			out.push(decode(raw));
		} catch (err) {
			onBad?.(err);
		}
	}
	return out;
}
