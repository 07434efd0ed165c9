import { describe, expect, test } from "bun:test";
import { type ArgSpec, flagValue, hasFlag, parseArgs } from "./args.ts";

// A command with a positional and flags, the shape `pair <url> [--machine NAME]…` will have.
const SPEC: ArgSpec = {
	usage: "t3code-mcp thing <url> [--name N] [--tag T]... [--json]",
	flags: {
		"--name": { value: true },
		"--tag": { value: true, repeat: true },
		"--json": { value: false },
	},
	positionals: { names: ["<url>"], min: 1 },
};

describe("parseArgs", () => {
	test("flags with values (both spellings), repeats, switches, a positional", () => {
		const args = parseArgs(
			["http://x", "--name", "mac", "--tag=a", "--tag", "b", "--json"],
			SPEC,
		);
		expect(args.positionals).toEqual(["http://x"]);
		expect(flagValue(args, "--name")).toBe("mac");
		expect(args.flags.get("--tag")).toEqual(["a", "b"]);
		expect(hasFlag(args, "--json")).toBe(true);
		expect(args.help).toBe(false);
	});

	test("after --, everything is positional", () => {
		expect(parseArgs(["--", "--json"], SPEC).positionals).toEqual(["--json"]);
	});

	test("each misuse is a UsageError saying what is wrong", () => {
		const cases: [string[], string][] = [
			[
				["http://x", "--bogus"],
				'unknown flag "--bogus" (valid: --name, --tag, --json)',
			],
			[["http://x", "extra"], 'unexpected argument "extra" (it takes <url>)'],
			[[], "missing <url>"],
			[["http://x", "--name"], "--name needs a value"],
			[["http://x", "--name", "--json"], "--name needs a value"],
			[["http://x", "--json=yes"], "--json takes no value"],
			[
				["http://x", "--name", "a", "--name", "b"],
				"--name given more than once",
			],
		];
		for (const [argv, message] of cases)
			expect(() => parseArgs(argv, SPEC)).toThrow(message);
		expect(() => parseArgs(["x"], { usage: "t3code-mcp serve" })).toThrow(
			'unexpected argument "x" (it takes none)',
		);
		expect(() => parseArgs(["-x"], { usage: "t3code-mcp serve" })).toThrow(
			'unknown flag "-x" (it takes none)',
		);
	});

	test("--help anywhere asks for help (the required positional may then be missing)", () => {
		expect(parseArgs(["--help"], SPEC).help).toBe(true);
		expect(parseArgs(["http://x", "-h"], SPEC).help).toBe(true);
	});
});
