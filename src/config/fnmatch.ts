/**
 * fnmatch-style project patterns (CONTRACT.md "Config": `projects`), translated to RegExp by hand.
 * picomatch is not used: even with `{ bash: true, dot: true }` its `?` and `[^…]` never match "/",
 * `[!a]` means "`!` or `a`" instead of "not `a`", and braces, extglobs and leading-`!` negation
 * are extras fnmatch does not have. Semantics follow Python's `fnmatch.fnmatchcase`.
 */

/** What a project is matched on: its title and its workspace root. */
export interface MatchableProject {
	title: string;
	workspaceRoot: string;
}

/** A pattern the config refuses; `message` says what is wrong and how to write it instead. */
export class PatternError extends Error {
	override name = "PatternError";
}

// Every RegExp syntax character, escaped outside classes (`u` mode allows escaping exactly these).
const SYNTAX = /[\\^$.*+?()[\]{}|/]/;

const codePoint = (ch: string): string =>
	`\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`;

/**
 * Translates one fnmatch pattern: `*` any run of characters (including "/" and a leading "."),
 * `?` exactly one character, `[seq]` / `[!seq]` one character in / not in seq (ranges `a-z`;
 * a "]" right after "[" or "[!" is literal). Everything else, backslash included, is literal.
 * Stricter than Python in three places, because each is almost surely a mistake in a config:
 * an unclosed "[", a reversed range, and a leading "!" (read as negation elsewhere).
 *
 * @example fnmatchToRegExp("/srv/*").test("/srv/a/b") // true
 */
export function fnmatchToRegExp(pattern: string): RegExp {
	if (pattern === "") throw new PatternError("empty pattern");
	if (pattern.startsWith("!")) {
		throw new PatternError(
			'a leading "!" is not supported: patterns only allow projects, they cannot exclude any',
		);
	}
	const chars = Array.from(pattern);
	let out = "";
	let i = 0;
	while (i < chars.length) {
		const ch = chars[i] as string;
		i++;
		if (ch === "*") {
			while (chars[i] === "*") i++;
			out += "[^]*";
		} else if (ch === "?") {
			out += "[^]";
		} else if (ch === "[") {
			const parsed = parseClass(chars, i);
			out += parsed.source;
			i = parsed.next;
		} else {
			out += SYNTAX.test(ch) ? `\\${ch}` : ch;
		}
	}
	return new RegExp(`^${out}$`, "u");
}

/** Parses a bracket expression whose "[" is just before `start`. */
function parseClass(
	chars: string[],
	start: number,
): { source: string; next: number } {
	let j = start;
	const negate = chars[j] === "!";
	if (negate) j++;
	const first = j;
	// A "]" first in the set is a member, not the end (POSIX, Python).
	if (chars[j] === "]") j++;
	while (j < chars.length && chars[j] !== "]") j++;
	if (j >= chars.length) {
		throw new PatternError('unclosed "["; write "[[]" to match a literal "["');
	}
	const members = chars.slice(first, j);
	let set = "";
	for (let k = 0; k < members.length; k++) {
		const lo = members[k] as string;
		const hi = members[k + 2];
		if (members[k + 1] === "-" && hi !== undefined) {
			if ((lo.codePointAt(0) ?? 0) > (hi.codePointAt(0) ?? 0)) {
				throw new PatternError(`reversed range "${lo}-${hi}" in "[…]"`);
			}
			set += `${codePoint(lo)}-${codePoint(hi)}`;
			k += 2;
		} else {
			set += codePoint(lo);
		}
	}
	return { source: `[${negate ? "^" : ""}${set}]`, next: j + 1 };
}

/** Why `pattern` is refused, or undefined when it compiles. */
export function patternProblem(pattern: string): string | undefined {
	try {
		fnmatchToRegExp(pattern);
		return undefined;
	} catch (err) {
		if (err instanceof PatternError) return err.message;
		throw err;
	}
}

/**
 * A predicate that allows a project when any pattern matches its title or its workspace root.
 * Case-sensitive. Throws PatternError on a pattern `patternProblem` would refuse.
 *
 * @example compileProjectMatcher(["*"])({ title: "x", workspaceRoot: "/srv/x" }) // true
 */
export function compileProjectMatcher(
	patterns: string[],
): (project: MatchableProject) => boolean {
	const res = patterns.map(fnmatchToRegExp);
	return function matchProject(project) {
		return res.some(
			(re) => re.test(project.title) || re.test(project.workspaceRoot),
		);
	};
}

/**
 * Matches a workspace path alone (adding a project): a pattern that only a title meets allows
 * no new path, and an allowed title never makes a path allowed.
 */
export function compilePathMatcher(
	patterns: string[],
): (path: string) => boolean {
	const res = patterns.map(fnmatchToRegExp);
	return (path) => res.some((re) => re.test(path));
}
