/**
 * `hook secret` and `hook test` in-process: the secret's format, a signed `webhook.test` that a
 * Standard Webhooks receiver verifies, a refusal and nothing listening (exit 1, saying why
 * without the hook URL's path or a secret), and no hook configured.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hookWorkspace } from "../../test/helpers/hook-workspace.ts";
import { freePort } from "../../test/helpers/process.ts";
import { TEST_SECRET } from "../../test/helpers/receiver.ts";
import { isWebhookSecret } from "../config/values.ts";
import type { ParsedArgs } from "./args.ts";
import { newWebhookSecret, runHook } from "./hook.ts";

const HOOK_TOKEN = "hook-bearer-0123456789";
/** A path segment long enough to be taken for a secret, as many webhook URLs have. */
const SECRET_PATH = "/hooks/path-secret-abcdefghijklmnop";

const workspace = hookWorkspace("t3code-mcp-hook-");

const args = (sub: string): ParsedArgs => ({
	flags: new Map(),
	positionals: [sub],
	help: false,
});

/** Runs `hook <sub>` with the hook at `url`; what it printed and its exit code. */
async function hook(sub: string, url?: string) {
	let stdout = "";
	let stderr = "";
	const code = await runHook(args(sub), {
		env: {
			T3CODE_MCP_CONFIG: join(workspace.dir, "t3code.toml"),
			T3CODE_MCP_STATE: join(workspace.dir, "state.sqlite"),
			T3CODE_MCP_HOOK_TOKEN: HOOK_TOKEN,
			T3CODE_MCP_HOOK_SECRET: TEST_SECRET,
			...(url === undefined ? {} : { T3CODE_MCP_HOOK_URL: url }),
		},
		cwd: workspace.dir,
		out: (t) => {
			stdout += t;
		},
		err: (t) => {
			stderr += t;
		},
		timeoutMs: 5_000,
	});
	return { code, stdout, stderr, all: stdout + stderr };
}

/** Nothing printed shows the path, the token or the secret. */
function expectNothingSecret(text: string) {
	expect(text).not.toContain("path-secret");
	expect(text).not.toContain(HOOK_TOKEN);
	expect(text).not.toContain(TEST_SECRET);
	expect(text).not.toContain(TEST_SECRET.slice("whsec_".length));
}

describe("hook secret", () => {
	test("whsec_ and the base64 of 32 random bytes, new every time", async () => {
		const first = await hook("secret");
		expect(first.code).toBe(0);
		expect(first.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
		const secret = first.stdout.trim();
		expect(isWebhookSecret(secret)).toBe(true);
		expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
		expect((await hook("secret")).stdout).not.toBe(first.stdout);
		expect(newWebhookSecret((b) => b.fill(0))).toBe(
			`whsec_${Buffer.alloc(32).toString("base64")}`,
		);
	});
});

describe("hook test", () => {
	test("2xx: one signed webhook.test the receiver verifies, its status and time printed, exit 0", async () => {
		workspace.receiver.setMode("ok");
		const before = workspace.receiver.deliveries.length;
		const run = await hook("test", `${workspace.receiver.url}${SECRET_PATH}`);
		expect(run.code).toBe(0);
		const delivery = workspace.receiver.deliveries[before];
		expect(workspace.receiver.deliveries).toHaveLength(before + 1);
		expect(delivery?.verified).toBe(true);
		expect(delivery?.headers.authorization).toBe(`Bearer ${HOOK_TOKEN}`);
		const body = delivery?.body as Record<string, unknown>;
		expect(Object.keys(body).sort()).toEqual(["id", "occurred_at", "type"]);
		expect(body.type).toBe("webhook.test");
		expect(body.id).toMatch(/^evt_/);
		expect(delivery?.headers["webhook-id"]).toBe(body.id as string);
		expect(Number.isNaN(Date.parse(body.occurred_at as string))).toBe(false);
		const origin = new URL(workspace.receiver.url).origin;
		expect(run.stdout).toMatch(
			new RegExp(
				`^✓ webhook\\.test ${body.id} to ${origin} .*: HTTP 204 in \\d+ ms`,
			),
		);
		expectNothingSecret(run.all);
	});

	test("500: the status and the receiver's words, exit 1", async () => {
		workspace.receiver.setMode({ status: 500, body: "database down" });
		try {
			const run = await hook("test", `${workspace.receiver.url}${SECRET_PATH}`);
			expect(run.code).toBe(1);
			expect(run.stdout).toMatch(
				/^✗ .*: HTTP 500 in \d+ ms .*: database down\n/,
			);
			expect(run.stdout).toContain("fix:");
			expectNothingSecret(run.all);
		} finally {
			workspace.receiver.setMode("ok");
		}
	});

	test("nothing listening: why, exit 1", async () => {
		const port = await freePort();
		const run = await hook("test", `http://127.0.0.1:${port}${SECRET_PATH}`);
		expect(run.code).toBe(1);
		expect(run.stdout).toContain(`to http://127.0.0.1:${port} `);
		expect(run.stdout).toContain("connection refused");
		expectNothingSecret(run.all);
	});

	test("no hook configured: names the variable and the config key, exit 1", async () => {
		const run = await hook("test");
		expect(run.code).toBe(1);
		expect(run.stderr).toContain("set T3CODE_MCP_HOOK_URL");
		expect(run.stderr).toContain("hook_url in [server]");
	});

	test("an unknown subcommand is a usage error", async () => {
		const run = await hook("send");
		expect(run.code).toBe(2);
		expect(run.stderr).toContain('"send"');
	});
});
