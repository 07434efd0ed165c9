/**
 * Counts what a drill promised against what the receiver got. The simulators are the source
 * of truth: every terminal run of a watched thread there must have produced exactly one event
 * id (redeliveries of that id are allowed and counted as duplicates, a second id is not).
 */
import { createHmac } from "node:crypto";
import type { Sim } from "../../src/sim/index.ts";
import { runOutcome } from "../../src/t3/derive/derive.ts";
import { type Delivery, TEST_SECRET } from "../../test/helpers/receiver.ts";

/**
 * The Standard Webhooks signature, checked without the receiver's 5-minute timestamp window
 * (the manual-clock drill runs ahead of wall time on purpose).
 */
export function signatureOk(d: Delivery, secret = TEST_SECRET): boolean {
	const id = d.headers["webhook-id"] ?? "";
	const timestamp = d.headers["webhook-timestamp"] ?? "";
	const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
	const mac = createHmac("sha256", key)
		.update(`${id}.${timestamp}.${d.raw}`)
		.digest("base64");
	return (d.headers["webhook-signature"] ?? "")
		.split(" ")
		.includes(`v1,${mac}`);
}

export interface DrillReport {
	drill: string;
	runs: number;
	expected: number;
	delivered: number;
	duplicates: number;
	/** Runs that got more than one distinct event id (breaks at-least-once-with-same-id). */
	extraIds: number;
	/** Deliveries for a run that is not terminal, or with the wrong type, or unsigned. */
	wrong: number;
	lost: number;
	seconds: number;
	notes: string[];
	/** Promises broken other than by lost events (e.g. recovery needed a reconnect); each fails the drill. */
	problems: string[];
	skipped?: string;
}

interface SimRun {
	id: string;
	status: string;
}

export interface Expectation {
	/** `thread:run` → event type. */
	expected: Map<string, string>;
	runs: number;
	/** Runs not terminal yet: their events cannot be expected (or missed) until they are. */
	busy: number;
}

/** Terminal runs of `threadIds` (default: every thread on the sims), with their event type. */
export function expectations(
	sims: Iterable<Sim>,
	threadIds?: Set<string>,
): Expectation {
	const expected = new Map<string, string>();
	let runs = 0;
	let busy = 0;
	for (const sim of sims) {
		for (const threadId of sim.threadIds()) {
			if (threadIds && !threadIds.has(threadId)) continue;
			const projection = sim.projection(threadId) as
				| { runs?: SimRun[] }
				| undefined;
			for (const run of projection?.runs ?? []) {
				runs += 1;
				const outcome = runOutcome(run.status);
				if (outcome) expected.set(`${threadId}:${run.id}`, `thread.${outcome}`);
				else busy += 1;
			}
		}
	}
	return { expected, runs, busy };
}

/** Run events only (questions and machine events are not part of these drills' accounting). */
function runEvents(deliveries: Delivery[]): Delivery[] {
	return deliveries.filter(
		(d) =>
			d.body.type !== "thread.question" &&
			!String(d.body.type).startsWith("machine."),
	);
}

export function missing(
	expectation: Expectation,
	deliveries: Delivery[],
): string[] {
	const got = new Set(
		runEvents(deliveries).map((d) => `${d.body.thread_id}:${d.body.run_id}`),
	);
	return [...expectation.expected.keys()].filter((k) => !got.has(k));
}

export function tally(
	drill: string,
	expectation: Expectation,
	deliveries: Delivery[],
	startedAt: number,
	notes: string[] = [],
): DrillReport {
	const events = runEvents(deliveries);
	const idsByRun = new Map<string, Set<string>>();
	const seen = new Set<string>();
	let duplicates = 0;
	let wrong = 0;
	for (const d of events) {
		const key = `${d.body.thread_id}:${d.body.run_id}`;
		const id = String(d.body.id);
		if (d.headers["webhook-id"] !== id || !signatureOk(d)) wrong += 1;
		if (seen.has(id)) duplicates += 1;
		seen.add(id);
		const ids = idsByRun.get(key) ?? new Set<string>();
		ids.add(id);
		idsByRun.set(key, ids);
		const type = expectation.expected.get(key);
		if (type !== d.body.type) wrong += 1;
	}
	let extraIds = 0;
	for (const ids of idsByRun.values()) extraIds += ids.size - 1;
	return {
		drill,
		runs: expectation.runs,
		expected: expectation.expected.size,
		delivered: seen.size,
		duplicates,
		extraIds,
		wrong,
		lost: missing(expectation, deliveries).length,
		seconds: (performance.now() - startedAt) / 1000,
		notes,
		problems: [],
	};
}

export function passed(report: DrillReport): boolean {
	return (
		report.skipped !== undefined ||
		(report.lost === 0 &&
			report.extraIds === 0 &&
			report.wrong === 0 &&
			report.problems.length === 0)
	);
}

/** A report with nothing counted, for a drill that did not get to its tally. */
function emptyReport(drill: string): DrillReport {
	return {
		drill,
		runs: 0,
		expected: 0,
		delivered: 0,
		duplicates: 0,
		extraIds: 0,
		wrong: 0,
		lost: 0,
		seconds: 0,
		notes: [],
		problems: [],
	};
}

export function skippedReport(drill: string, reason: string): DrillReport {
	return { ...emptyReport(drill), skipped: reason };
}

/** A drill that threw: lost is unknown (NaN), and the error is its problem. */
export function crashedReport(drill: string, error: unknown): DrillReport {
	return {
		...emptyReport(drill),
		lost: Number.NaN,
		problems: [
			`crashed: ${error instanceof Error ? error.stack : String(error)}`,
		],
	};
}

/** A fixed-width table, one row per drill, then each drill's notes. */
export function formatTable(reports: DrillReport[]): string {
	const head = [
		"drill",
		"runs",
		"expected",
		"delivered",
		"duplicates",
		"extra ids",
		"wrong",
		"lost",
		"time s",
		"result",
	];
	const rows = reports.map((r) => [
		r.drill,
		String(r.runs),
		String(r.expected),
		String(r.delivered),
		String(r.duplicates),
		String(r.extraIds),
		String(r.wrong),
		String(r.lost),
		r.seconds.toFixed(1),
		r.skipped ? "SKIPPED" : passed(r) ? "ok" : "FAIL",
	]);
	const widths = head.map((h, i) =>
		Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)),
	);
	const line = (cells: string[]) =>
		cells
			.map((c, i) =>
				i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0),
			)
			.join("  ");
	const out = [line(head), widths.map((w) => "-".repeat(w)).join("  ")];
	for (const row of rows) out.push(line(row));
	for (const r of reports) {
		if (r.skipped) out.push(`  ${r.drill}: skipped: ${r.skipped}`);
		for (const problem of r.problems)
			out.push(`  ${r.drill}: PROBLEM: ${problem}`);
		for (const note of r.notes) out.push(`  ${r.drill}: ${note}`);
	}
	return out.join("\n");
}
