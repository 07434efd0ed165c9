/**
 * A TOML syntax error as one line a user can act on: where (line number) and what to do.
 * Bun.TOML's errors carry neither a usable position nor a fix, so the line is found by parsing
 * ever longer prefixes of the text until the same error appears.
 */

/** Past this many lines the search (one parse per line) is skipped. */
const MAX_SEARCHED_LINES = 2_000;

export function tomlSyntaxMessage(text: string, error: unknown): string {
	const detail = String((error as Error)?.message ?? error).replace(
		/^TOML Parse error:\s*/,
		"",
	);
	const line = errorLine(text, detail);
	const source = line === undefined ? "" : (text.split("\n")[line - 1] ?? "");
	const at = line === undefined ? "" : ` at line ${line}`;
	return `TOML syntax error${at}: ${detail}; ${fixFor(detail, source.trim())}`;
}

function fixFor(detail: string, source: string): string {
	if (/^Cannot redefine table/.test(detail))
		return `${source || "that table"} is defined twice: merge both into one table`;
	if (/^Cannot redefine key/.test(detail))
		return "that key is set twice in its table: keep one";
	return 'fix that line (strings in "double quotes", tables as [name], one key = value per line; see t3code.example.toml)';
}

/** The 1-based line where `detail` first appears, or undefined when it cannot be told. */
function errorLine(text: string, detail: string): number | undefined {
	const lines = text.split("\n");
	if (lines.length > MAX_SEARCHED_LINES) return undefined;
	for (let k = 1; k <= lines.length; k++) {
		try {
			// With its newline: a line cut short reads as "end of input", not as the error.
			Bun.TOML.parse(`${lines.slice(0, k).join("\n")}\n`);
		} catch (error) {
			const message = String((error as Error)?.message ?? "");
			if (message.endsWith(detail)) return k;
		}
	}
	return undefined;
}
