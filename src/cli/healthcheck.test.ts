import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runHealthcheck } from "./healthcheck.ts";

let server: ReturnType<typeof Bun.serve>;
let dir: string;
beforeAll(() => {
	server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch: (req) =>
			new URL(req.url).pathname === "/healthz"
				? Response.json({ status: "ok" })
				: new Response("no", { status: 404 }),
	});
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-healthcheck-"));
});
afterAll(() => {
	server.stop(true);
	rmSync(dir, { recursive: true, force: true });
});

test("needs no config file: the port from the environment", async () => {
	const env = {
		T3CODE_MCP_CONFIG: join(dir, "absent.toml"),
		T3CODE_MCP_PORT: String(server.port),
	};
	expect(await runHealthcheck(env, 2_000)).toBe(0);
});

test("reads [server] port from the config file when there is one", async () => {
	const file = join(dir, "t3code.toml");
	writeFileSync(file, `[server]\nport = ${server.port}\n`);
	expect(await runHealthcheck({ T3CODE_MCP_CONFIG: file }, 2_000)).toBe(0);
});
