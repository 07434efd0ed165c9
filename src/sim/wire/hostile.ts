/**
 * The hostile simulator mode (`startSim({hostile: true})`, `sim --hostile`): a T3 server that
 * echoes the bearer it sees into every text it sends, to prove the connector masks it
 * everywhere (CONTRACT.md "HTTP"). Applied to every JSON value on the way out (HTTP bodies and
 * socket frames), never to the simulator's own state:
 *
 * - titles (threads, projects, tool calls) and short texts (question headers, questions,
 *   options, prompts, warnings, search snippets): the bearer appended, and titles again
 *   straddling the 300 character cap of tool titles;
 * - message and item texts: the bearer straddling every cut the connector makes (the wait
 *   progress line, the 500 / 2 000 / 4 000 / 8 000 caps), after a line of ordinary code that
 *   must come through unchanged; a message still streaming ends with only a piece of it, so the
 *   secret is split across the stream's updates;
 * - diffs: a line with the bearer in every hunk, and a line of ordinary code;
 * - attachment names and branch names: the bearer appended;
 * - error texts (`message`, `reason` of error bodies, `lastError`, defects): the bearer
 *   straddling the 200 and 500 character cuts of error text.
 *
 * How much of the bearer comes before each cut is `shift` + 1 characters when given, else it
 * follows the original text's length (and an error's owner id), so texts of different lengths
 * cover every position. `echo` adds other secrets T3 could have been told (the webhook's secret,
 * the connector's own bearer): each is written whole before the bearer wherever it is appended.
 */

export interface HostileOptions {
	/** Characters of the bearer before each cut, minus one (0 … length − 2); default varies. */
	shift?: number;
	/** More texts echoed whole before the bearer (default none). */
	echo?: string[];
}

export interface Hostile {
	/** Notes the bearer a request carried (the one echoed from then on). */
	saw(bearer: string | undefined): void;
	/** A copy of an outgoing JSON value with the bearer echoed into its texts. */
	rewrite<T>(value: T): T;
}

/** Ordinary code in a message: the generic `Bearer` pattern must not touch it. */
export const HOSTILE_CODE =
	// biome-ignore lint/suspicious/noTemplateCurlyInString: code as a message quotes it
	"const headers = { Authorization: `Bearer ${token}` };";

/** Where the connector cuts message texts: its caps minus the 12-character marker. */
const TEXT_CUTS = [108, 488, 1_988, 3_988, 7_988];
/** Where it cuts error texts: 200 and 500 minus the 1-character "…". */
const ERROR_CUTS = [199, 499];
/** Where it cuts tool titles: 300 minus the marker. */
const TITLE_CUTS = [288];
const SHORT_KEYS = new Set([
	"label",
	"description",
	"header",
	"question",
	"prompt",
	"warning",
	"summary",
	"snippet",
]);
const ERROR_KEYS = new Set(["message", "lastError", "detail", "defect"]);

function idHash(owner: Record<string, unknown>): number {
	const id = typeof owner.id === "string" ? owner.id : "";
	let hash = 0;
	for (let i = 0; i < id.length; i++)
		hash = (hash * 31 + id.charCodeAt(i)) >>> 0;
	return hash;
}

export function createHostile(options: HostileOptions = {}): Hostile {
	let bearer = "";
	const also = (options.echo ?? []).map((e) => `${e} `).join("");

	/** `text` then the bearer so that it straddles each cut; `vary` moves where. */
	function straddle(text: string, cuts: number[], vary = 0): string {
		let out = text;
		for (const cut of cuts) {
			const before =
				1 +
				((options.shift ?? text.length + vary) %
					Math.max(1, bearer.length - 1));
			const start = cut - before;
			if (out.length > start) continue;
			out = `${out}${"·".repeat(start - out.length)}${bearer}`;
		}
		return out;
	}

	function text(orig: string, streaming: boolean): string {
		if (streaming) {
			// Split across the stream's updates: each ends with a growing piece of the bearer.
			const piece = 5 + (orig.length % Math.max(1, bearer.length - 5));
			return `${orig} ${also}${bearer.slice(0, Math.min(piece, bearer.length - 1))}`;
		}
		const first = straddle(`${orig} ${also}${bearer}`, TEXT_CUTS.slice(0, 1));
		// Ends past the last cut, so every cap cuts it.
		return `${straddle(`${first}\n${HOSTILE_CODE}\n`, TEXT_CUTS.slice(1))}${"·".repeat(300)} (end of hostile text)`;
	}

	function diff(orig: string): string {
		return orig.replace(
			/^(@@[^\n]*\n)/gm,
			`$1+// ${bearer}\n+${HOSTILE_CODE}\n`,
		);
	}

	function field(
		key: string,
		value: string,
		owner: Record<string, unknown>,
	): string {
		if (key === "title")
			return straddle(`${value} ${also}${bearer}`, TITLE_CUTS);
		if (key === "text") return text(value, owner.streaming === true);
		// A tool's whole output (`getTurnItem`) is cut like message texts.
		if (key === "output") return text(value, false);
		if (key === "diff") return diff(value);
		if (SHORT_KEYS.has(key)) return `${value} ${also}${bearer}`;
		// An attachment reference (`persistChatAttachments`): its name comes back as T3 keeps it,
		// and the connector stores the reference with its dispatch. A branch is named by T3 too
		// (a temporary one, a rename).
		if (
			(key === "name" && typeof owner.mimeType === "string") ||
			key === "branch"
		)
			return `${value} ${also}${bearer}`;
		const errorBody =
			typeof owner._tag === "string" && owner._tag.endsWith("Error");
		// An error text is often the same for every run ("agent failure"): where the bearer
		// sits follows its owner's id too, so runs cover the positions.
		if (ERROR_KEYS.has(key) || (key === "reason" && errorBody))
			return straddle(`${value} ${also}${bearer}`, ERROR_CUTS, idHash(owner));
		return value;
	}

	function walk(value: unknown, depth: number): unknown {
		if (value === null || typeof value !== "object" || depth > 40) return value;
		if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
		const record = value as Record<string, unknown>;
		const out: Record<string, unknown> = {};
		for (const [key, v] of Object.entries(record))
			out[key] =
				typeof v === "string" && v.length > 0
					? field(key, v, record)
					: walk(v, depth + 1);
		return out;
	}

	return {
		saw(seen) {
			if (seen !== undefined && seen.length >= 8) bearer = seen;
		},
		rewrite: <T>(value: T): T =>
			bearer === "" ? value : (walk(value, 0) as T),
	};
}

/** An HTTP answer with its JSON body rewritten (anything else unchanged). */
export async function hostileResponse(
	hostile: Hostile,
	response: Response,
): Promise<Response> {
	if (!response.headers.get("content-type")?.includes("json")) return response;
	const body = await response.json();
	return new Response(JSON.stringify(hostile.rewrite(body)), {
		status: response.status,
		headers: response.headers,
	});
}
