/**
 * Real MCP test clients against the running server (loopback, no inbound token, the demo
 * machine on a sim): every scenario of the official conformance suite
 * (`@modelcontextprotocol/conformance`) that applies to a tools-only server, and the MCP
 * Inspector CLI's `tools/list --strict` in both protocol eras. Both tools want Node ≥ 22, so
 * they run under this Bun, each in a throwaway HOME and working directory.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Finished, runToExit } from "../helpers/process.ts";
import { demoMachine, type Stack, startStack } from "../helpers/stack.ts";

const ROOT = join(import.meta.dir, "../..");
const CONFORMANCE = join(
	ROOT,
	"node_modules/@modelcontextprotocol/conformance/dist/index.js",
);
const INSPECTOR = join(
	ROOT,
	"node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js",
);

/** The server scenarios this server is held to. */
const APPLICABLE = [
	"server-initialize",
	"ping",
	"tools-list",
	"dns-rebinding-protection",
];

/**
 * Every other server scenario of the suite, and why it does not apply. A new scenario in a
 * newer suite fails the listing test below until it is sorted into one of the two lists.
 */
const FIXTURE_TOOLS =
	"calls a fixture tool of the SDK's everything-server (test_*), which a tools-only server with its own tools does not have";
const NOT_APPLICABLE: Record<string, string> = {
	"logging-set-level": "no logging capability (logs go to stderr)",
	"completion-complete": "no prompts or resource templates to complete",
	"tools-call-simple-text": FIXTURE_TOOLS,
	"tools-call-image": FIXTURE_TOOLS,
	"tools-call-audio": FIXTURE_TOOLS,
	"tools-call-embedded-resource": FIXTURE_TOOLS,
	"tools-call-mixed-content": FIXTURE_TOOLS,
	"tools-call-with-logging": FIXTURE_TOOLS,
	"tools-call-error": FIXTURE_TOOLS,
	"tools-call-with-progress": FIXTURE_TOOLS,
	"tools-call-sampling": FIXTURE_TOOLS,
	"tools-call-elicitation": FIXTURE_TOOLS,
	"json-schema-2020-12": FIXTURE_TOOLS,
	"elicitation-sep1034-defaults": FIXTURE_TOOLS,
	"elicitation-sep1330-enums": FIXTURE_TOOLS,
	"server-sse-polling":
		"needs protocol sessions and SSE resumption; the server is stateless",
	"server-sse-multiple-streams":
		"needs protocol sessions (GET streams); the server is stateless",
	"resources-list": "no resources",
	"resources-read-text": "no resources",
	"resources-read-binary": "no resources",
	"resources-templates-read": "no resources",
	"resources-subscribe": "no resources",
	"resources-unsubscribe": "no resources",
	"prompts-list": "no prompts",
	"prompts-get-simple": "no prompts",
	"prompts-get-with-args": "no prompts",
	"prompts-get-embedded-resource": "no prompts",
	"prompts-get-with-image": "no prompts",
};

let stack: Stack;
let home: string;

/** `bun <script> …args` in the throwaway HOME, with a plain environment and a time limit. */
function runUnderBun(script: string, args: string[]): Promise<Finished> {
	return runToExit([process.execPath, script, ...args], {
		cwd: home,
		env: { PATH: process.env.PATH ?? "", HOME: home, NO_COLOR: "1" },
		timeout: 30_000,
	});
}

beforeAll(async () => {
	home = mkdtempSync(join(tmpdir(), "t3code-mcp-clients-"));
	stack = await startStack({ machines: [demoMachine([], ["*"])] });
});

afterAll(async () => {
	await stack?.stop();
	rmSync(home, { recursive: true, force: true });
});

describe("MCP conformance suite", () => {
	test("every server scenario is either run or excluded with a reason", async () => {
		const { code, stdout } = await runUnderBun(CONFORMANCE, ["list"]);
		expect(code).toBe(0);
		const server = stdout.slice(
			stdout.indexOf("Server scenarios"),
			stdout.indexOf("Client scenarios"),
		);
		const listed = [...server.matchAll(/^\s*- (\S+)/gm)].map((m) => m[1]);
		expect(listed.length).toBeGreaterThan(0);
		expect(listed.sort()).toEqual(
			[...APPLICABLE, ...Object.keys(NOT_APPLICABLE)].sort(),
		);
	});

	for (const scenario of APPLICABLE) {
		test(scenario, async () => {
			const out = join(home, `conformance-${scenario}`);
			const run = await runUnderBun(CONFORMANCE, [
				"server",
				"--url",
				stack.server.mcpUrl,
				"--scenario",
				scenario,
				"--output-dir",
				out,
			]);
			const [dir] = readdirSync(out);
			const checks = JSON.parse(
				readFileSync(join(out, dir ?? "", "checks.json"), "utf8"),
			) as { id: string; status: string; errorMessage?: string }[];
			const failed = checks.filter(
				(c) => c.status !== "SUCCESS" && c.status !== "INFO",
			);
			expect(failed, run.stdout).toEqual([]);
			expect(checks.some((c) => c.status === "SUCCESS")).toBe(true);
			expect(run.code, run.stderr).toBe(0);
		});
	}
});

describe("MCP Inspector CLI", () => {
	for (const era of ["legacy", "modern"] as const) {
		test(`tools/list --strict, ${era} era (${era === "legacy" ? "2025-11-25" : "2026-07-28"})`, async () => {
			const client = await stack.client({ era });
			const expected = (await client.listTools()).tools.map((t) => t.name);
			const run = await runUnderBun(INSPECTOR, [
				"--server-url",
				stack.server.mcpUrl,
				"--transport",
				"http",
				"--protocol-era",
				era,
				"--method",
				"tools/list",
				"--strict",
				"--format",
				"json",
			]);
			// --strict exits 6 on any error-severity schema problem.
			expect(run.code, run.stderr).toBe(0);
			const body = JSON.parse(run.stdout) as {
				result: { tools: { name: string }[] };
				schemaFindings?: {
					toolName: string;
					findings: {
						rule: string;
						severity: string;
						schema: string;
						path: string;
						issue: string;
					}[];
				}[];
			};
			expect(body.result.tools.map((t) => t.name)).toEqual(expected);
			const findings = (body.schemaFindings ?? []).flatMap((t) =>
				t.findings.map((f) => ({ ...f, tool: t.toolName })),
			);
			const shown = (f: (typeof findings)[number]) =>
				`${f.tool} ${f.schema} ${f.path}: ${f.issue}`;
			// --strict fails only on errors; warnings are held to none too. zod 4 writes nullable
			// and other bare-type unions as `type: [..]`, legal JSON Schema that clients mapping
			// schemas onto a single-`type` dialect (Gemini function declarations) reject; the
			// server spells them as `anyOf` (src/mcp/cached-schema.ts).
			expect(findings.map(shown)).toEqual([]);
		});
	}
});
