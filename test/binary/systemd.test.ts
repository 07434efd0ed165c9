/**
 * deploy/t3code-mcp.service: `systemd-analyze verify` on a copy whose ExecStart points at the
 * freshly built binary (verify fails when that path does not exist), the options the issue
 * asks for, and none it forbids. Skips with the reason when systemd-analyze is missing
 * (.ci/run installs Debian's `systemd` package).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary, ROOT } from "./helpers.ts";

const UNIT = join(ROOT, "deploy", "t3code-mcp.service");
const text = readFileSync(UNIT, "utf8");
const active = text
	.split("\n")
	.filter((l) => l.trim() !== "" && !l.trim().startsWith("#"));
const analyze = Bun.which("systemd-analyze");
if (!analyze)
	console.warn(
		"SKIP systemd-analyze verify: systemd-analyze is not installed (apt-get install systemd; .ci/run does)",
	);

describe("deploy/t3code-mcp.service", () => {
	test("has the service settings and hardening the issue asks for", () => {
		for (const line of [
			"ExecStart=/usr/local/bin/t3code-mcp serve",
			"ExecReload=/bin/kill -HUP $MAINPID",
			"DynamicUser=yes",
			"StateDirectory=t3code-mcp",
			"ConfigurationDirectory=t3code-mcp",
			"Environment=T3CODE_MCP_CONFIG=%E/t3code-mcp/t3code.toml",
			"EnvironmentFile=-/etc/t3code-mcp/secrets.env",
			"Restart=on-failure",
			"ProtectSystem=strict",
			"ProtectHome=yes",
			"PrivateTmp=yes",
			"NoNewPrivileges=yes",
			"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
		]) {
			expect(active).toContain(line);
		}
		// State comes from STATE_DIRECTORY: the unit must not pin another path.
		expect(active.some((l) => l.includes("T3CODE_MCP_STATE"))).toBe(false);
		// The JIT needs W+X memory.
		expect(active.some((l) => l.startsWith("MemoryDenyWriteExecute=yes"))).toBe(
			false,
		);
		// Documented, commented alternatives.
		expect(text).toMatch(/^#LoadCredential=T3_MAC_TOKEN:/m);
		// Two clients, each token a credential named by its token_file.
		expect(text).toMatch(/^#LoadCredential=agent\.token:/m);
		expect(text).toMatch(/^#LoadCredential=approver\.token:/m);
		expect(text).toContain('token_file = "agent.token"');
		expect(text).toMatch(/^#IPAddressAllow=localhost 100\.64\.0\.0\/10/m);
	});

	describe.skipIf(!analyze)("systemd-analyze", () => {
		let dir: string;
		let unit: string;
		beforeAll(async () => {
			const binary = await ensureBinary();
			dir = mkdtempSync(join(tmpdir(), "t3code-mcp-unit-"));
			unit = join(dir, "t3code-mcp.service");
			writeFileSync(
				unit,
				text.replace(
					/^ExecStart=\/usr\/local\/bin\/t3code-mcp serve$/m,
					`ExecStart=${binary} serve`,
				),
			);
		}, 120_000);
		afterAll(() => rmSync(dir, { recursive: true, force: true }));

		test("verify passes on a copy pointing at the built binary", () => {
			const result = Bun.spawnSync([analyze as string, "verify", unit], {
				stdout: "pipe",
				stderr: "pipe",
			});
			const output = `${result.stdout}${result.stderr}`.trim();
			expect(output).toBe("");
			expect(result.exitCode).toBe(0);
		});

		test("verify fails on the original while /usr/local/bin/t3code-mcp is missing (so the copy's pass means something)", () => {
			if (Bun.file("/usr/local/bin/t3code-mcp").size > 0) return;
			const result = Bun.spawnSync([analyze as string, "verify", UNIT], {
				stdout: "pipe",
				stderr: "pipe",
			});
			expect(result.exitCode).not.toBe(0);
			expect(result.stderr.toString()).toContain("/usr/local/bin/t3code-mcp");
		});

		test("security --offline rates the exposure OK or better", () => {
			const result = Bun.spawnSync(
				[analyze as string, "security", "--offline=yes", unit],
				{ stdout: "pipe", stderr: "pipe" },
			);
			const line = `${result.stdout}`.match(
				/Overall exposure level for \S+: ([\d.]+) (\w+)/,
			);
			expect(line).not.toBeNull();
			console.log(
				`systemd-analyze security: exposure ${line?.[1]} ${line?.[2]}`,
			);
			expect(Number(line?.[1])).toBeLessThanOrEqual(4);
		});
	});
});
