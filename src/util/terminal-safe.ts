/**
 * Text from callers made safe to print on a terminal line (CONTRACT.md "Trust round three":
 * the `audit` table). Every control character (C0, DEL, C1), format character (the bidi marks
 * and embeddings U+200E/F, U+202A–202E, U+2066–2069, U+061C, zero-width characters, the BOM,
 * tag characters), line and paragraph separator (U+2028/2029) and lone surrogate is shown
 * escaped (`\n`, `\r`, `\t`, `\u001b`, `\u202e`, `\u{e0041}`), and a backslash as `\\`, so
 * what is printed reads back unambiguously and can neither start a line, move the cursor,
 * colour the terminal nor reorder what follows. A cut keeps whole characters and escapes and
 * ends in `…`.
 */

/** Escaped: Cc (C0, DEL, C1), Cf (format, bidi), Zl, Zp, Cs (lone surrogates) and `\`. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\\]/u;

const SHORT: Record<string, string> = {
	"\n": "\\n",
	"\r": "\\r",
	"\t": "\\t",
	"\\": "\\\\",
};

/** One code point as printed. */
function shown(char: string): string {
	if (!UNSAFE.test(char)) return char;
	const short = SHORT[char];
	if (short !== undefined) return short;
	const code = char.codePointAt(0) ?? 0;
	return code > 0xffff
		? `\\u{${code.toString(16)}}`
		: `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * `text` with every unsafe character escaped; when `maxWidth` is given and the escaped text is
 * longer (in code points), it is cut to `maxWidth` with `…` as its last character, never
 * inside an escape.
 */
export function terminalSafe(text: string, maxWidth?: number): string {
	// Most values are plain and short: no copy.
	if (!UNSAFE.test(text) && (maxWidth === undefined || text.length <= maxWidth))
		return text;
	const pieces = Array.from(text, shown);
	const width = (piece: string) => [...piece].length;
	const limit = maxWidth ?? Number.POSITIVE_INFINITY;
	if (pieces.reduce((n, p) => n + width(p), 0) <= limit) return pieces.join("");
	let out = "";
	let used = 0;
	for (const piece of pieces) {
		used += width(piece);
		if (used > limit - 1) break;
		out += piece;
	}
	return `${out}…`;
}
