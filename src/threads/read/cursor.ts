/**
 * Page cursors (`t3_threads`, `t3_diff`) are opaque and tamper-proof: the JSON a page resumes
 * from, signed with a key kept in the state file, for one tool. An altered, forged or other
 * tool's cursor is refused before anything is sent to T3; what it holds still has to fit the
 * call it comes with (the caller checks that), and a misfit is refused the same way.
 */
import type { Db } from "../../store/db.ts";
import { ownKey } from "../../store/keys.ts";
import { ThreadError } from "../errors.ts";

export const INVALID_CURSOR = "cursor is not valid; call again without cursor";

/** A refused cursor; `why` (optional) says what did not fit. */
export function invalidCursor(why?: string): ThreadError {
	return new ThreadError(
		why ? `${INVALID_CURSOR} (${why}).` : `${INVALID_CURSOR}.`,
	);
}

/** One key per state file, read once. */
const keys = new WeakMap<Db, Uint8Array>();
function keyFor(db: Db): Uint8Array {
	let key = keys.get(db);
	if (!key) {
		key = ownKey(db, "cursor");
		keys.set(db, key);
	}
	return key;
}

/** Bun's HMAC: node:crypto's JS layer costs ~4 MB and start-up time (signature.ts). */
function mac(db: Db, tool: string, payload: string): string {
	return new Bun.CryptoHasher("sha256", keyFor(db))
		.update(`${tool}\n${payload}`)
		.digest("base64url");
}

/** Compares in time independent of where the texts differ. */
function sameText(a: string, b: string): boolean {
	if (a.length !== b.length) return false;
	let diff = 0;
	for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
	return diff === 0;
}

export function sealCursor(db: Db, tool: string, body: unknown): string {
	const payload = Buffer.from(JSON.stringify(body)).toString("base64url");
	return `${payload}.${mac(db, tool, payload)}`;
}

/** The body `sealCursor` put in, or a refusal when the cursor is not one it made for `tool`. */
export function openCursor(db: Db, tool: string, cursor: string): unknown {
	const [payload, signature, extra] = cursor.split(".");
	if (payload === undefined || signature === undefined || extra !== undefined)
		throw invalidCursor();
	// Compared as text, so no other spelling of the same bytes passes.
	if (!sameText(signature, mac(db, tool, payload))) throw invalidCursor();
	try {
		return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
	} catch {
		throw invalidCursor();
	}
}
