/**
 * bench/results.json is committed, and `biome check .` (CI) formats JSON its own way (short
 * arrays of numbers filled onto lines): written as `JSON.stringify` leaves it, the file fails CI
 * after every `bun run bench`. So the text goes through the repository's own biome formatter
 * before it is written.
 */
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const BIOME = join(ROOT, "node_modules/.bin/biome");
/** Formatted as this path: biome.json's JSON settings apply. */
export const RESULTS_PATH = "bench/results.json";

/** `value` as biome formats bench/results.json; throws (naming biome) when it cannot. */
export function resultsText(value: unknown): string {
	const raw = `${JSON.stringify(value, null, "\t")}\n`;
	const run = Bun.spawnSync(
		[BIOME, "format", `--stdin-file-path=${RESULTS_PATH}`],
		{ cwd: ROOT, stdin: Buffer.from(raw), stdout: "pipe", stderr: "pipe" },
	);
	if (run.exitCode !== 0)
		throw new Error(
			`biome could not format ${RESULTS_PATH} (run npm ci first): ${run.stderr.toString().trim()}`,
		);
	return run.stdout.toString();
}
