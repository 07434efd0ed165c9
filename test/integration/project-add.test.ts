/**
 * `t3_project_add` (issue 18 item 5, CONTRACT.md "Parallel work"): through the official MCP
 * client against the simulator. Hidden means nonexistent: a path is added only where the
 * machine's patterns match the path itself, outside (not inside, equal to or above) every
 * existing project's root, hidden ones included, with a title unused on the machine.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { callTool, type Stack, startStack } from "../helpers/stack.ts";

type Added = {
	machine: string;
	project: { id: string; title: string; path: string };
	created: boolean;
};
type Projects = { projects: { id: string; title: string; path: string }[] };

let stack: Stack;
let client: Client;

beforeAll(async () => {
	stack = await startStack({
		machines: [
			{
				name: "demo",
				sim: {
					projects: [
						{ title: "demo", workspaceRoot: "/srv/t3/demo" },
						{ title: "secret", workspaceRoot: "/srv/t3/secret" },
						{ title: "work", workspaceRoot: "/home/me/work" },
						{ title: "vault", workspaceRoot: "/opt/vault/repo" },
					],
				},
				// Paths under /srv/t3 and the title "work": a title-only match allows no addition.
				// "/opt/?????" allows /opt/vault, which lies above the hidden project "vault".
				projects: [
					"/srv/t3/demo",
					"/srv/t3/new*",
					"/srv/t3/secret/*",
					"/opt/?????",
					"work",
				],
			},
			{
				name: "old",
				sim: { compat: "prerelease" },
				projects: ["*"],
			},
		],
	});
	client = await stack.client();
});
afterAll(() => stack.stop());

const add = (args: Record<string, unknown>) =>
	callTool<Added>(client, "t3_project_add", { machine: "demo", ...args });

test("adds an existing directory; the project is listed by t3_projects at once", async () => {
	// /srv/t3 exists on the sim (it holds the projects' roots), so its new child needs create.
	const missing = await add({ path: "/srv/t3/new-app" });
	expect(missing.isError).toBe(true);
	expect(missing.text).toContain("does not exist");
	expect(missing.text).toContain("create: true");

	const made = await add({ path: "/srv/t3/new-app", create: true });
	expect(made.isError).toBe(false);
	expect(made.data.created).toBe(true);
	expect(made.data.project).toMatchObject({
		title: "new-app",
		path: "/srv/t3/new-app",
	});
	const listed = await callTool<Projects>(client, "t3_projects", {
		machine: "demo",
	});
	expect(listed.data.projects.map((p) => p.path)).toContain("/srv/t3/new-app");
	expect(
		stack
			.sim("demo")
			.projects()
			.map((p) => p.workspaceRoot),
	).toContain("/srv/t3/new-app");
});

test("an idempotent replay returns the first result; other arguments under the key are refused", async () => {
	const first = await add({
		path: "/srv/t3/new-lib",
		create: true,
		idempotency_key: "add-lib",
	});
	expect(first.isError).toBe(false);
	const again = await add({
		path: "/srv/t3/new-lib",
		create: true,
		idempotency_key: "add-lib",
	});
	expect(again.data).toEqual(first.data);
	const other = await add({
		path: "/srv/t3/new-other",
		create: true,
		idempotency_key: "add-lib",
	});
	expect(other.isError).toBe(true);
	expect(other.text).toContain(
		"with different arguments (path and title differ)",
	);
});

test("refused: not allowed by path, title tricks, . and .., inside or above a project, a used title", async () => {
	const refusals: [Record<string, unknown>, string][] = [
		// The pattern "work" matches a title only: it allows no path.
		[{ path: "/home/me/other", title: "work", create: true }, "not allowed"],
		[{ path: "/elsewhere/app", create: true }, "not allowed"],
		[{ path: "srv/t3/new-rel" }, "absolute"],
		[{ path: "/srv/t3/new-x/../secret" }, "normalised"],
		[{ path: "/srv/t3/./new-y" }, "normalised"],
		[{ path: "/srv/t3/new-z/" }, "must not end with /"],
		// Inside the hidden project "secret": refused without naming it.
		[{ path: "/srv/t3/secret/inner", create: true }, "not available to you"],
		// Above the hidden project "vault" (/opt/vault/repo).
		[{ path: "/opt/vault", create: true }, "not available to you"],
		[{ path: "/srv/t3/demo" }, 'already project "demo"'],
		[{ path: "/srv/t3/a\u0000b", create: true }, "must not contain NUL"],
		[{ path: "/srv/t3/a\nb", create: true }, "any other control character"],
		[{ path: "/srv/t3/new-app/sub", create: true }, 'inside project "new-app"'],
		[{ path: "/srv/t3/new-q", title: "secret", create: true }, "already used"],
		[
			{ path: "/srv/t3/new-q", title: "demo", create: true },
			"already the title",
		],
	];
	const hidden = stack
		.sim("demo")
		.projects()
		.filter((p) => p.title === "secret" || p.title === "vault");
	for (const [args, text] of refusals) {
		const result = await add(args);
		expect({ args, isError: result.isError }).toEqual({ args, isError: true });
		expect(result.text).toContain(text);
		// Nothing about a hidden project beyond what the caller passed.
		for (const h of hidden) {
			expect(result.text).not.toContain(String(h.id));
			if (!String(args.path).startsWith(h.workspaceRoot))
				expect(result.text).not.toContain(h.workspaceRoot);
		}
	}
	// Nothing was added by any refusal: demo, secret, work, vault, new-app, new-lib.
	expect(stack.sim("demo").projects()).toHaveLength(6);
});

test("unknown arguments and a bad path type are refused by name", async () => {
	const typo = await add({ path: "/srv/t3/new-t", craete: true });
	expect(typo.isError).toBe(true);
	expect(typo.text).toContain('"craete"');
});

test("the pre-release engine: a clear 'does not support' error, never a crash", async () => {
	const result = await callTool<Added>(client, "t3_project_add", {
		machine: "old",
		path: "/srv/t3/anything",
		create: true,
	});
	expect(result.isError).toBe(true);
	expect(result.text).toContain("does not support adding projects");
});
