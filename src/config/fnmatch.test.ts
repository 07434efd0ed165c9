import { describe, expect, it } from "bun:test";
import picomatch from "picomatch";
import {
	compileProjectMatcher,
	fnmatchToRegExp,
	PatternError,
	patternProblem,
} from "./fnmatch.ts";

const m = (pattern: string, s: string) => fnmatchToRegExp(pattern).test(s);

describe("fnmatchToRegExp", () => {
	it("* matches any characters, including / and a leading dot", () => {
		expect(m("*", "/srv/t3/ws")).toBe(true);
		expect(m("*", ".dotfiles")).toBe(true);
		expect(m("*", "")).toBe(true);
		expect(m("/srv/*", "/srv/a/b")).toBe(true);
		expect(m("/srv/*", "/srv/.hidden")).toBe(true);
		expect(m("/srv/*", "/srv")).toBe(false);
		expect(m("*/ws", "/srv/t3/ws")).toBe(true);
		expect(m("a**b", "a/x/b")).toBe(true);
	});

	it("? matches exactly one character, / included", () => {
		expect(m("?", "a")).toBe(true);
		expect(m("?", "")).toBe(false);
		expect(m("?", "ab")).toBe(false);
		expect(m("a?c", "a/c")).toBe(true);
		expect(m("??", "é!")).toBe(true); // code points, not UTF-16 units
		expect(m("?", "😀")).toBe(true);
	});

	it("[seq], [!seq], ranges and a leading ]", () => {
		expect(m("[ab]x", "ax")).toBe(true);
		expect(m("[ab]x", "bx")).toBe(true);
		expect(m("[ab]x", "cx")).toBe(false);
		expect(m("[!a]x", "bx")).toBe(true);
		expect(m("[!a]x", "ax")).toBe(false);
		expect(m("[!a]x", "/x")).toBe(true);
		expect(m("v[0-9]", "v7")).toBe(true);
		expect(m("v[0-9]", "vx")).toBe(false);
		expect(m("[]]", "]")).toBe(true);
		expect(m("[!]]", "a")).toBe(true);
		expect(m("[!]]", "]")).toBe(false);
		expect(m("[a-]", "-")).toBe(true);
		expect(m("[[]x", "[x")).toBe(true);
		expect(m("[\\]", "\\")).toBe(true);
		expect(m("[^]", "^")).toBe(true); // ^ is literal in fnmatch
	});

	it("is case-sensitive", () => {
		expect(m("Foo", "foo")).toBe(false);
		expect(m("Foo", "Foo")).toBe(true);
		expect(m("[a-z]", "A")).toBe(false);
	});

	it("treats every other character literally (no braces, extglobs or escapes)", () => {
		expect(m("a.b", "a.b")).toBe(true);
		expect(m("a.b", "axb")).toBe(false);
		expect(m("{a,b}", "{a,b}")).toBe(true);
		expect(m("{a,b}", "a")).toBe(false);
		expect(m("a+(b)", "a+(b)")).toBe(true);
		expect(m("a+(b)", "abb")).toBe(false);
		expect(m("\\*", "\\anything")).toBe(true);
		expect(m("C:\\src\\*", "C:\\src\\x")).toBe(true);
		expect(m("a$|^b", "a$|^b")).toBe(true);
		expect(m("x!", "x!")).toBe(true);
	});

	it("refuses a leading !, an unclosed [ and a reversed range", () => {
		expect(patternProblem("!secret")).toBe(
			'a leading "!" is not supported: patterns only allow projects, they cannot exclude any',
		);
		expect(patternProblem("[ab")).toBe(
			'unclosed "["; write "[[]" to match a literal "["',
		);
		expect(patternProblem("[z-a]")).toBe('reversed range "z-a" in "[…]"');
		expect(patternProblem("")).toBe("empty pattern");
		expect(patternProblem("/srv/*")).toBeUndefined();
		expect(() => fnmatchToRegExp("[")).toThrow(PatternError);
	});
});

describe("compileProjectMatcher", () => {
	const project = { title: "web", workspaceRoot: "/srv/t3/web" };

	it("allows a project when any pattern matches its title or its workspace root", () => {
		expect(compileProjectMatcher(["web"])(project)).toBe(true);
		expect(compileProjectMatcher(["/srv/t3/*"])(project)).toBe(true);
		expect(compileProjectMatcher(["api", "/srv/*/web"])(project)).toBe(true);
		expect(compileProjectMatcher(["api", "/home/*"])(project)).toBe(false);
		expect(compileProjectMatcher([])(project)).toBe(false);
	});

	it("throws on a refused pattern", () => {
		expect(() => compileProjectMatcher(["*", "!web"])).toThrow(PatternError);
	});
});

// Why fnmatch.ts does not use picomatch: these are the differences it has even with the options
// CONTRACT.md names. If one of these starts failing, picomatch changed; the decision still holds.
describe("picomatch { bash: true, dot: true } is not fnmatch", () => {
	const pm = (pattern: string, s: string) =>
		picomatch(pattern, { bash: true, dot: true })(s);
	it("agrees on * crossing / and dots", () => {
		expect(pm("*", "/srv/t3/ws")).toBe(true);
		expect(pm("*", ".dotfiles")).toBe(true);
		expect(pm("/srv/*", "/srv/a/b")).toBe(true);
	});
	it("differs on ?, [!seq], negation and braces", () => {
		expect(pm("a?c", "a/c")).toBe(false);
		expect(pm("[!a]x", "bx")).toBe(false);
		expect(pm("[!a]x", "ax")).toBe(true);
		expect(pm("!web", "api")).toBe(true);
		expect(pm("{a,b}", "a")).toBe(true);
	});
});
