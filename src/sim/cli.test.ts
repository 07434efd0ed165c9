import { describe, expect, it } from "bun:test";
import { SIM_PROMPTS } from "./agent/prompts.ts";
import { parseSimFlags, simHelp } from "./cli.ts";
import { simHas } from "./compat.ts";
import { startSim } from "./sim.ts";

describe("sim command flags", () => {
	it("parses every flag, defaulting the port to 3773", () => {
		expect(parseSimFlags([])).toEqual({ port: 3773 });
		expect(
			parseSimFlags([
				"--host",
				"0.0.0.0",
				"--port",
				"0",
				"--token",
				"t",
				"--project",
				"a=/srv/a",
				"--project",
				"b=/srv/b",
				"--protocol",
				"1",
				"--step-ms",
				"5",
				"--compat",
				"prerelease",
			]),
		).toEqual({
			host: "0.0.0.0",
			port: 0,
			token: "t",
			protocol: 1,
			stepMs: 5,
			compat: "prerelease",
			projects: [
				{ title: "a", workspaceRoot: "/srv/a" },
				{ title: "b", workspaceRoot: "/srv/b" },
			],
		});
	});

	it("--help: the usage line, every flag the parser takes and every prompt the agent understands", () => {
		const help = simHelp();
		expect(help).toStartWith("usage: t3code-mcp sim [--host H]");
		const usage = help.split("\n")[0] as string;
		const flags = [...usage.matchAll(/\[(--[a-z-]+)( [^\]]+)?\]/g)];
		expect(flags.map((f) => f[1])).toEqual([
			"--host",
			"--port",
			"--token",
			"--project",
			"--protocol",
			"--step-ms",
			"--compat",
			"--usage",
			"--pairing",
		]);
		for (const [, flag, value] of flags) {
			// Each one listed is one the parser takes, with a value when the usage shows one.
			const sample: Record<string, string> = {
				"--port": "0",
				"--project": "a=/a",
				"--protocol": "2",
				"--step-ms": "1",
				"--compat": "current",
				"--usage": "codex=session:50",
			};
			const argv = value
				? [flag as string, sample[flag as string] ?? "x"]
				: [flag as string];
			expect(() => parseSimFlags(argv)).not.toThrow();
			expect(help).toContain(`\n  ${flag}`);
		}
		for (const p of SIM_PROMPTS) expect(help).toContain(`"${p.prompt}"`);
		expect(help).toContain("anything else");
	});

	it("rejects bad flags with a clear message", () => {
		expect(() => parseSimFlags(["--bogus"])).toThrow('unknown flag "--bogus"');
		expect(() => parseSimFlags(["--port", "99999"])).toThrow(
			"--port must be an integer from 0 to 65535",
		);
		expect(() => parseSimFlags(["--protocol", "4"])).toThrow(
			"--protocol must be 1, 2 or 3",
		);
		expect(() => parseSimFlags(["--compat", "v0"])).toThrow(
			'--compat must be one of current, prerelease, got "v0"',
		);
		expect(parseSimFlags(["--protocol", "3"]).protocol).toBe(3);
		expect(() => parseSimFlags(["--project", "nopath"])).toThrow("TITLE=PATH");
		expect(() => parseSimFlags(["--token"])).toThrow("--token needs a value");
	});

	it("exits 2 on a bad flag, and prints URL and token when started", async () => {
		const entry = new URL("./cli.ts", import.meta.url).pathname;
		const bad = Bun.spawn(
			[
				process.execPath,
				"-e",
				`import { runSimCommand } from "${entry}"; await runSimCommand(["--nope"]);`,
			],
			{
				stderr: "pipe",
			},
		);
		expect(await bad.exited).toBe(2);
		expect(await new Response(bad.stderr).text()).toContain(
			'sim: unknown flag "--nope"',
		);
		const good = Bun.spawn(
			[
				process.execPath,
				"-e",
				`import { runSimCommand } from "${entry}"; await runSimCommand(["--port", "0", "--token", "abc"]);`,
			],
			{
				stdout: "pipe",
			},
		);
		const reader = good.stdout.getReader();
		let out = "";
		while (!out.includes("token:")) {
			const { value, done } = await reader.read();
			if (done) break;
			out += new TextDecoder().decode(value);
		}
		expect(out).toMatch(/T3 simulator listening on http:\/\/127\.0\.0\.1:\d+/);
		expect(out).toContain("token: abc");
		good.kill("SIGTERM");
		expect(await good.exited).toBe(0);
	});

	it("--compat prerelease imitates the pre-release engine, which lacks the newer features", async () => {
		const sim = await startSim({ compat: "prerelease" });
		try {
			expect(sim.compat).toBe("prerelease");
			expect(simHas(sim.compat, "deliveryIntent")).toBe(false);
		} finally {
			await sim.stop();
		}
		const current = await startSim({});
		try {
			expect(current.compat).toBe("current");
			expect(simHas(current.compat, "deliveryIntent")).toBe(true);
		} finally {
			await current.stop();
		}
	});
});
