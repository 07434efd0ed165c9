/**
 * Docs a new operator can follow (issue 42): the compose file the docs show is
 * deploy/compose.yaml, `--help` names every environment variable the code reads, and no
 * command in README.md or docs/ needs a bun on PATH (`npm run …` or `npx bun …`: "no bun
 * needed" stays true).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const pages = [
	"README.md",
	...readdirSync(join(ROOT, "docs"))
		.filter((f) => f.endsWith(".md"))
		.sort()
		.map((f) => `docs/${f}`),
];

interface Fence {
	lang: string;
	body: string;
}

/** Every fenced code block of a markdown text, with its info string's first word. */
function fences(text: string): Fence[] {
	return [...text.matchAll(/^```([^\n`]*)\n([\s\S]*?)^```$/gm)].map((m) => ({
		lang: (m[1] ?? "").trim().split(/\s+/)[0] ?? "",
		body: m[2] ?? "",
	}));
}

const SHELL = new Set(["sh", "bash", "shell", "console", "zsh"]);

/**
 * The commands a shell line runs, each as its words start: comments and a `$ ` prompt dropped,
 * split at `&&`, `||`, `;`, `|` and `$(`, leading `NAME=value` assignments and `sudo` removed.
 */
export function commandsOf(line: string): string[] {
	const code = line.replace(/^\s*\$\s+/, "").replace(/(^|\s)#.*$/, "");
	return code
		.split(/&&|\|\||;|\||\$\(|`/)
		.map((part) =>
			part
				.trim()
				.replace(/^\(+/, "")
				.replace(
					/^(?:(?:[A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|'[^']*'|\S*)|sudo|exec|time|env)\s+)*/,
					"",
				),
		)
		.filter((part) => part !== "");
}

/** `bun` run as a command of its own (not `npx bun`, `npm run`, `bun:sqlite`, `oven/bun`). */
const bareBun = (command: string) => /^bun(\s|$)/.test(command);

/** Where a page runs a bare `bun`: lines of shell blocks, and inline code spans in prose. */
function bareBunCommands(page: string, text: string): string[] {
	const found: string[] = [];
	for (const fence of fences(text)) {
		if (!SHELL.has(fence.lang)) continue;
		let continued = false;
		for (const line of fence.body.split("\n")) {
			// A continuation line holds arguments of the command above, not a command.
			if (!continued && commandsOf(line).some(bareBun))
				found.push(`${page}: ${line.trim()}`);
			continued = /\\\s*$/.test(line);
		}
	}
	const prose = text.replace(/^```[\s\S]*?^```$/gm, "");
	for (const [, span = ""] of prose.matchAll(/`([^`\n]+)`/g))
		if (commandsOf(span).some(bareBun)) found.push(`${page}: \`${span}\``);
	return found;
}

describe("docs a new operator can follow", () => {
	test("the compose file shown in docs/ is deploy/compose.yaml, byte for byte", () => {
		const file = read("deploy/compose.yaml");
		const shown = pages.flatMap((page) =>
			fences(read(page))
				.filter((f) => f.lang === "yaml" && /^services:/m.test(f.body))
				.map((f) => ({ page, body: f.body })),
		);
		expect(shown.map((s) => s.page)).toContain("docs/deployment.md");
		for (const { body } of shown) expect(body).toBe(file);
	});

	test("--help names every T3CODE_MCP_* variable the code reads", () => {
		const names = new Set<string>();
		const walk = (dir: string) => {
			for (const entry of readdirSync(join(ROOT, dir), {
				withFileTypes: true,
			})) {
				const path = `${dir}/${entry.name}`;
				if (entry.isDirectory()) walk(path);
				else if (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name))
					for (const [name] of read(path).matchAll(
						/T3CODE_MCP_[A-Z0-9_]*[A-Z0-9]/g,
					))
						names.add(name);
			}
		};
		walk("src");
		// The server's own settings, read in one place.
		for (const [name] of read("src/config/env.ts").matchAll(
			/T3CODE_MCP_[A-Z0-9_]*[A-Z0-9]/g,
		))
			expect(names).toContain(name);
		for (const name of ["T3CODE_MCP_TASK_TTL_S", "T3CODE_MCP_CLIENT"])
			expect(names).toContain(name);
		const help = Bun.spawnSync(
			[process.execPath, join(ROOT, "src/index.ts"), "--help"],
			{ cwd: ROOT, env: { PATH: process.env.PATH ?? "" } },
		);
		expect(help.exitCode).toBe(0);
		const text = help.stdout.toString();
		const missing = [...names].filter(
			(name) => !new RegExp(`\\b${name}\\b`).test(text),
		);
		expect(missing).toEqual([]);
	});

	test("README and docs/ run no bare `bun`: `npm run …` or `npx bun …`", () => {
		expect(pages.flatMap((page) => bareBunCommands(page, read(page)))).toEqual(
			[],
		);
	});

	test("the bare-bun check finds what it is meant to, and nothing else", () => {
		const page = [
			"```sh",
			"bun test",
			"$ bun run demo",
			"npm ci && bun run build",
			"T3CODE_MCP_TOKEN=… bun scripts/smoke.ts",
			"npx bun test x.test.ts         # not bare",
			"npm run check        # … && bun test (a comment)",
			"docker run \\",
			"  bun is an argument here",
			"```",
			"Use `bun run bench` or `BENCH_ONLY=scale bun run bench`; `npx bun --cpu-prof` and",
			"`bun:sqlite`, `oven/bun:1.4.5` are fine, and so is no bun needed.",
			"```toml",
			"bun = 1",
			"```",
		].join("\n");
		expect(bareBunCommands("p", page)).toEqual([
			"p: bun test",
			"p: $ bun run demo",
			"p: npm ci && bun run build",
			"p: T3CODE_MCP_TOKEN=… bun scripts/smoke.ts",
			"p: `bun run bench`",
			"p: `BENCH_ONLY=scale bun run bench`",
		]);
	});
});
