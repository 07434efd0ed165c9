/**
 * SIGHUP on a running `t3code-mcp serve` process (CONTRACT.md "Operators"): it re-reads the
 * config file and the client token files; the same process keeps serving; a config that does
 * not load is logged and the old one keeps serving. The same process (run from a temp dir) also
 * shows that the pages render away from the repository's tsconfig.json.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sim, startSim } from "../../src/sim/index.ts";
import { type ServerProcess, startServerProcess } from "../helpers/process.ts";
import { until } from "../helpers/stack.ts";

const OLD = "agent-token-old-0123456789abcdef";
const NEW = "agent-token-new-0123456789abcdef";
const BOSS = "boss-token-0123456789abcdef";

describe("SIGHUP", () => {
	let dir: string;
	let sim: Sim;
	let server: ServerProcess;
	const file = () => join(dir, "t3code.toml");

	beforeAll(async () => {
		dir = mkdtempSync(join(tmpdir(), "t3code-mcp-hup-"));
		sim = await startSim({ stepMs: 5, coalesceMs: 5 });
		writeFileSync(join(dir, "agent.token"), `${OLD}\n`, { mode: 0o600 });
		writeFileSync(join(dir, "boss.token"), `${BOSS}\n`, { mode: 0o600 });
		server = await startServerProcess({
			dir,
			machines: [{ name: "a", url: sim.url, token: sim.token }],
			statePath: join(dir, "state.sqlite"),
			env: { T3CODE_MCP_LOG_LEVEL: "info" },
			moreToml: [
				"[clients.agent]",
				`token_file = ${JSON.stringify(join(dir, "agent.token"))}`,
				'access = "read-only"',
				"[clients.boss]",
				`token_file = ${JSON.stringify(join(dir, "boss.token"))}`,
				'access = "full-access"',
				"",
			].join("\n"),
		});
	});

	afterAll(async () => {
		await server?.kill();
		await sim?.stop();
		rmSync(dir, { recursive: true, force: true });
	});

	const status = async (token: string) =>
		(
			await fetch(`${server.url}/metrics`, {
				headers: { authorization: `Bearer ${token}` },
			})
		).status;
	const reloads = () =>
		server
			.stderr()
			.split("\n")
			.filter((l) => l.includes('"config reload')).length;
	/** Sends SIGHUP and waits for the reload's log line. */
	const hangUp = async () => {
		const before = reloads();
		server.proc.kill("SIGHUP");
		await until(() => reloads() > before, 10_000, "the reload's log line");
	};

	it("a client's rotated token_file: the old token is refused, the new one accepted, by the same process", async () => {
		const pid = server.proc.pid;
		expect(await status(OLD)).toBe(403);
		writeFileSync(join(dir, "agent.token"), `${NEW}\n`, { mode: 0o600 });
		await hangUp();
		expect(await status(OLD)).toBe(401);
		expect(await status(NEW)).toBe(403);
		expect(await status(BOSS)).toBe(200);
		expect(server.proc.exitCode).toBeNull();
		expect(server.proc.pid).toBe(pid);
		const line = server
			.stderr()
			.split("\n")
			.find((l) => l.includes('"config reloaded"'));
		expect(JSON.parse(line ?? "{}").clients_changed).toEqual(["agent"]);
		// Never a token in the log.
		expect(server.stderr()).not.toContain(NEW);
		expect(server.stderr()).not.toContain(OLD);
	});

	it("renders its pages whatever the working directory (the JSX runtime is named in each file)", async () => {
		// The process runs in a temp dir, away from the repository's tsconfig.json.
		const page = await (await fetch(`${server.url}/console`)).text();
		expect(page).toStartWith("<!doctype html><html");
		expect(page).not.toContain("[object Object]");
	});

	it("a config that does not load is logged, and the old one keeps serving", async () => {
		appendFileSync(file(), "\n[clients.broken]\naccess = 12\n");
		await hangUp();
		expect(server.stderr()).toContain(
			"config reload failed: the running config keeps serving",
		);
		expect(await status(NEW)).toBe(403);
		expect(await status(BOSS)).toBe(200);
		expect(server.proc.exitCode).toBeNull();
	});
});
