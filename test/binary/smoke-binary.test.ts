/**
 * .ci/smoke-binary, the release workflow's check of the linux-x64 binary, run here against the
 * host build: it passes for the right version and fails, saying why, for a wrong one.
 */
import { beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { runToExit } from "../helpers/process.ts";
import { cleanEnv, ensureBinary, ROOT } from "./helpers.ts";

let binary: string;
beforeAll(async () => {
	binary = await ensureBinary();
}, 120_000);

async function smoke(version: string) {
	return runToExit(["bash", join(ROOT, ".ci/smoke-binary"), binary, version], {
		cwd: ROOT,
		env: cleanEnv({}),
		timeout: 60_000,
	});
}

test("passes for the package version: --version, and demo answers /healthz", async () => {
	const run = await smoke(pkg.version);
	expect(run.code, run.stderr).toBe(0);
	expect(run.stdout).toContain(`${pkg.version}, demo /healthz ok`);
});

test("fails for another version, naming both", async () => {
	const run = await smoke("9.9.9");
	expect(run.code).toBe(1);
	expect(run.stderr).toContain(
		`--version printed '${pkg.version}', expected '9.9.9'`,
	);
});
