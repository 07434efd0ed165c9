import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { RESULTS_PATH, resultsText } from "./results-file.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** What `biome check --write` makes of `text` as bench/results.json (lint and format). */
function biomeFixed(text: string): string {
	const run = Bun.spawnSync(
		[
			join(ROOT, "node_modules/.bin/biome"),
			"check",
			"--write",
			`--stdin-file-path=${RESULTS_PATH}`,
		],
		{ cwd: ROOT, stdin: Buffer.from(text), stdout: "pipe", stderr: "pipe" },
	);
	expect(run.exitCode).toBe(0);
	return run.stdout.toString();
}

describe("bench/results.json as the bench writes it", () => {
	// The shapes the bench writes: long sample arrays, nested summaries, the table's text.
	const results = {
		machine: { nproc: 2, cpu: "x", quick: false, config: { only: undefined } },
		table: "| a | b |\n|---|---|",
		results: {
			wake: {
				event: { n: 3, p50: 1.5, p99: 2.25, min: 1, max: 3, mean: 1.9 },
				samplesMs: { event: Array.from({ length: 200 }, (_, i) => i / 7) },
				rows: [{ figure: "f", value: "v", pass: null }],
			},
			empty: { list: [], nested: [[1, 2], []] },
		},
	};

	it("is what biome check leaves unchanged, so CI passes after a bench run", () => {
		const text = resultsText(results);
		expect(biomeFixed(text)).toBe(text);
		// Plain JSON.stringify output is not: the reason for formatting at all.
		const plain = `${JSON.stringify(results, null, "\t")}\n`;
		expect(biomeFixed(plain)).not.toBe(plain);
	});

	it("keeps every figure", () => {
		expect(JSON.parse(resultsText(results))).toEqual(
			JSON.parse(JSON.stringify(results)),
		);
	});
});
