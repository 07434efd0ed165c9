/**
 * Token files that are not files (issue 26 item 11), with the real processes: a `token_file`
 * that is a FIFO used to stop `serve` from starting (and froze it on reconnect), and
 * `/dev/zero` grew `check` without end. Now each is a reason naming the file, on that machine
 * alone: `serve` answers, its other machine comes online, `check` ends and says why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { type Sim, startSim } from "../../src/sim/index.ts";
import {
	runToExit,
	type ServerProcess,
	startServerProcess,
} from "../helpers/process.ts";
import { callTool, connectClient, until } from "../helpers/stack.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = join(ROOT, "src/index.ts");
const MKFIFO = Bun.which("mkfifo");

let dir: string;
/** The good machine's T3, and the one behind the FIFO (its requests count its connects). */
let sim: Sim;
let pipedSim: Sim;
let good: string;
let fifo: string;

const fifoReason = (path: string) =>
	`token file ${path} (token_file) is a FIFO (named pipe), not a regular file; write the token alone in a regular file (\`t3code-mcp pair\` does)`;

function mkfifo(path: string): void {
	const made = Bun.spawnSync([MKFIFO ?? "mkfifo", path]);
	if (made.exitCode !== 0) throw new Error(`mkfifo ${path}: ${made.stderr}`);
}

type Row = { name: string; state: string; reason: string | null };

async function machines(client: Client): Promise<Record<string, Row>> {
	const { data } = await callTool<{ machines: Row[] }>(client, "t3_machines");
	return Object.fromEntries(data.machines.map((m) => [m.name, m]));
}

describe.skipIf(!MKFIFO)("a token_file that is a FIFO or a device", () => {
	beforeAll(async () => {
		dir = mkdtempSync(join(tmpdir(), "t3code-mcp-token-special-"));
		[sim, pipedSim] = await Promise.all([startSim(), startSim()]);
		good = join(dir, "good.token");
		writeFileSync(good, `${sim.token}\n`, { mode: 0o600 });
		fifo = join(dir, "piped.token");
		mkfifo(fifo);
	});
	afterAll(async () => {
		await Promise.all([sim.stop(), pipedSim.stop()]);
		rmSync(dir, { recursive: true, force: true });
	});

	test("serve starts and answers; the good machine comes online; the FIFO machine is unauthorized naming the file, also after a new FIFO replaces it", async () => {
		let server: ServerProcess | undefined;
		let client: Client | undefined;
		try {
			// Throws if /healthz does not answer in 15 s: the FIFO held up the start.
			server = await startServerProcess({
				dir,
				statePath: join(dir, "serve.sqlite"),
				machines: [
					{ name: "good", url: sim.url, tokenFile: good },
					{ name: "piped", url: pipedSim.url, tokenFile: fifo },
				],
			});
			client = await connectClient(server.mcpUrl);
			const mcp = client;
			let rows: Record<string, Row> = {};
			await until(
				async () => {
					rows = await machines(mcp);
					return (
						rows.good?.state === "online" &&
						rows.piped?.state === "unauthorized"
					);
				},
				10_000,
				"good online, piped unauthorized",
			);
			expect(rows.piped?.reason).toBe(
				`T3 machine "piped" (${pipedSim.url}): ${fifoReason(fifo)}`,
			);
			const health = (await (await fetch(`${server.url}/healthz`)).json()) as {
				machines: Record<string, Row>;
			};
			expect(health.machines.good?.state).toBe("online");
			expect(health.machines.piped).toMatchObject({
				state: "unauthorized",
				reason: `T3 machine "piped" (${pipedSim.url}): ${fifoReason(fifo)}`,
			});

			// A re-pair that leaves a FIFO again: the watcher connects at once and reads it.
			const connects = () =>
				pipedSim.stats().requests["GET /.well-known/t3/environment"] ?? 0;
			const before = connects();
			const next = join(dir, "next.fifo");
			mkfifo(next);
			renameSync(next, fifo);
			await until(() => connects() > before, 10_000, "a reconnect of piped");
			rows = await machines(mcp);
			expect(rows.piped).toMatchObject({
				state: "unauthorized",
				reason: `T3 machine "piped" (${pipedSim.url}): ${fifoReason(fifo)}`,
			});
			expect(rows.good?.state).toBe("online");
			expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
		} finally {
			await client?.close();
			await server?.kill();
		}
		// Beyond the helper's own 15 s start deadline, so a hung server is killed, not left.
	}, 30_000);

	test("check ends at once with exit 1, naming the FIFO and the device, and still checks the good machine", async () => {
		const config = join(dir, "check.toml");
		writeFileSync(
			config,
			[
				["good", sim.url, good],
				["piped", pipedSim.url, fifo],
				["zero", pipedSim.url, "/dev/zero"],
			]
				.map(
					([name, url, file]) =>
						`[machines.${name}]\nurl = "${url}"\ntoken_file = ${JSON.stringify(file)}\nprojects = ["*"]\n`,
				)
				.join("\n"),
		);
		// The timeout kills a hung check: it then prints no report, and the test fails.
		const run = await runToExit([process.execPath, "run", ENTRY, "check"], {
			cwd: dir,
			env: {
				PATH: process.env.PATH ?? "",
				HOME: dir,
				T3CODE_MCP_CONFIG: config,
				T3CODE_MCP_STATE: join(dir, "check.sqlite"),
			},
			timeout: 20_000,
		});
		expect(run.stdout).toContain(`✗ token present: ${fifoReason(fifo)}\n`);
		expect(run.stdout).toContain(
			"✗ token present: token file /dev/zero (token_file) is a device, not a regular file",
		);
		expect(run.stdout).toContain(
			`✓ authenticated: the token in token file ${good} is accepted`,
		);
		expect(run.stdout).toContain("2 checks failed");
		expect(run.code).toBe(1);
	}, 30_000);
});
