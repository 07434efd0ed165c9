/**
 * `bun run bench`: runs each benchmark in turn against simulators on loopback, prints one
 * table and writes bench/results.json (raw figures + machine info). See bench/README.md.
 */
import { cpus, totalmem } from "node:os";
import { relative } from "node:path";
import { benchConsole } from "./console.ts";
import { benchFootprint } from "./footprint.ts";
import { benchHealthz } from "./healthz.ts";
import { benchHeld } from "./held.ts";
import { config } from "./lib/config.ts";
import { resultsText } from "./lib/results-file.ts";
import { ensureBinary, ROOT } from "./lib/server.ts";
import { type Row, renderTable } from "./lib/table.ts";
import { benchLoad } from "./load.ts";
import { benchOverhead } from "./overhead.ts";
import { benchPlacement } from "./placement.ts";
import { benchScale } from "./scale.ts";
import { benchTasks } from "./tasks.ts";
import { benchThreads } from "./threads.ts";
import { benchThroughput } from "./throughput.ts";
import { benchWake } from "./wake.ts";

type Bench = () => Promise<{ rows: Row[]; raw: Record<string, unknown> }>;

/** Run by default; `scale` only when `BENCH_ONLY` names it (minutes of thread creation). */
const BENCHES: [string, Bench][] = [
	["wake", benchWake],
	["tasks", benchTasks],
	["overhead", benchOverhead],
	["healthz", benchHealthz],
	["footprint", benchFootprint],
	["throughput", benchThroughput],
	["load", benchLoad],
	["threads", benchThreads],
	["placement", benchPlacement],
	["held", benchHeld],
	["console", benchConsole],
];
const OPT_IN: [string, Bench][] = [["scale", benchScale]];

const started = performance.now();
const binary = ensureBinary(config.rebuild);
const rows: Row[] = [];
const results: Record<string, unknown> = {};
for (const [name, bench] of [...BENCHES, ...OPT_IN]) {
	if (
		config.only ? !config.only.includes(name) : OPT_IN.some(([n]) => n === name)
	)
		continue;
	const t0 = performance.now();
	process.stderr.write(`bench ${name}…\n`);
	try {
		const out = await bench();
		rows.push(...out.rows);
		results[name] = {
			...out.raw,
			rows: out.rows,
			ran: new Date().toISOString(),
			seconds: Math.round((performance.now() - t0) / 100) / 10,
		};
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		process.stderr.write(`bench ${name} failed: ${message}\n`);
		rows.push({
			figure: name,
			value: `error: ${message}`,
			baseline: "-",
			ratio: "-",
			target: "-",
			pass: false,
		});
		results[name] = { error: message };
	}
	process.stderr.write(
		`bench ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
	);
}

console.log(renderTable(rows));
// A subset run (BENCH_ONLY) replaces only its own benches' figures: the others stay as the last
// run that measured them left them (each says when: `ran`), so `BENCH_ONLY=scale` does not wipe
// the full run's figures.
const previous = await Bun.file(new URL("results.json", import.meta.url))
	.json()
	.then((v: { results?: Record<string, unknown> }) => v.results ?? {})
	.catch(() => ({}) as Record<string, unknown>);
for (const [name] of [...BENCHES, ...OPT_IN])
	if (!(name in results) && name in previous) results[name] = previous[name];
const ordered = Object.fromEntries(
	[...BENCHES, ...OPT_IN]
		.map(([name]) => [name, results[name]] as const)
		.filter(([, v]) => v !== undefined),
);
const table = renderTable(
	Object.values(ordered).flatMap((r) => (r as { rows?: Row[] }).rows ?? []),
);
const machine = {
	nproc: navigator.hardwareConcurrency,
	cpu: cpus()[0]?.model,
	memMb: Math.round(totalmem() / 2 ** 20),
	bun: Bun.version,
	platform: `${process.platform}-${process.arch}`,
	date: new Date().toISOString(),
	// Relative to the repository: results.json is committed and names no local path.
	binary: { ...binary, path: relative(ROOT, binary.path) },
	quick: config.quick,
	config,
	totalSeconds: Math.round((performance.now() - started) / 100) / 10,
};
// Formatted as biome formats it, so `biome check .` (CI) still passes after a run; a run's
// figures are never lost to a missing formatter.
const written = { machine, table, results: ordered };
let text: string;
try {
	text = resultsText(written);
} catch (error) {
	process.stderr.write(`${error instanceof Error ? error.message : error}\n`);
	text = `${JSON.stringify(written, null, "\t")}\n`;
}
await Bun.write(new URL("results.json", import.meta.url), text);
console.log(
	`\n${rows.filter((r) => r.pass === false).length} target(s) missed; ${machine.totalSeconds} s; wrote bench/results.json`,
);
// Everything is stopped; leftover timers (a client's request timeouts, stop() fallbacks) would
// only hold the process open for minutes after the table.
process.exit(0);
