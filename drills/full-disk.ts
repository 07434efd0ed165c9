/**
 * Drill: the sqlite state file lives on a small tmpfs that fills up while runs are in flight.
 * Writes must fail with a clear error (never corrupt the file), the server must keep serving,
 * and once space returns the events of runs that finished meanwhile must still arrive.
 * Needs root (mount); otherwise it is reported as skipped with the reason.
 */
import { Database } from "bun:sqlite";
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import {
	call,
	dispatchUntilAccepted,
	eventually,
	startDrillStack,
	until,
} from "./lib/harness.ts";
import { heldRuns } from "./lib/held-runs.ts";
import { latestRunStatus } from "./lib/settle.ts";
import { type DrillSize, settleStack, untilOnline } from "./lib/stack-drill.ts";
import { type DrillReport, skippedReport } from "./lib/tally.ts";

function mountTmpfs(dir: string, size: string): string | null {
	mkdirSync(dir, { recursive: true });
	const result = Bun.spawnSync([
		"mount",
		"-t",
		"tmpfs",
		"-o",
		`size=${size}`,
		"tmpfs",
		dir,
	]);
	if (result.exitCode === 0) return null;
	return `mount -t tmpfs failed (${result.exitCode}): ${result.stderr.toString().trim() || "no output"}`;
}

/** Checkpoints the server's WAL and truncates it (sqlite waits out a write holding it). */
function truncateWal(statePath: string): void {
	const db = new Database(statePath);
	try {
		db.exec("PRAGMA busy_timeout = 5000");
		db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
	} finally {
		db.close();
	}
}

/** Fills the file system with one file until ENOSPC; returns its path. */
function fill(dir: string): string {
	const path = join(dir, "filler");
	const fd = openSync(path, "w");
	const chunk = Buffer.alloc(16 * 1024, 1);
	try {
		for (;;) writeSync(fd, chunk);
	} catch {
		// ENOSPC: full
	}
	try {
		for (;;) writeSync(fd, Buffer.alloc(512, 1));
	} catch {
		// the last few blocks
	}
	closeSync(fd);
	return path;
}

export async function fullDiskDrill({ full }: DrillSize): Promise<DrillReport> {
	const startedAt = performance.now();
	if (process.platform !== "linux" || process.getuid?.() !== 0)
		return skippedReport(
			"full-disk",
			"needs root on Linux to mount a small tmpfs",
		);
	const held = full ? 6 : 3;
	const base = `/tmp/t3code-mcp-full-disk-${process.pid}`;
	const mountError = mountTmpfs(base, "4m");
	if (mountError) return skippedReport("full-disk", mountError);
	const notes: string[] = [];
	try {
		const statePath = join(base, "state.sqlite");
		const stack = await startDrillStack({ statePath });
		try {
			const sim = stack.sim();
			await untilOnline(stack);
			const warm = await dispatchUntilAccepted(
				stack.client,
				"demo",
				"say hello before",
			);
			await until(
				() => stack.receiver.deliveries.length >= 1,
				10_000,
				"first event",
			);
			void warm;
			const ids = await heldRuns(stack, held);
			// An emptied WAL first: sqlite rewrites a checkpointed WAL in place, so right after a
			// checkpoint a full disk would still take a write or two (the drill then saw a dispatch
			// succeed under load). Truncated, its next write must grow the file.
			truncateWal(statePath);
			const filler = fill(base);
			// New work needs a write: it must fail clearly.
			const refused = await call(stack.client, "t3_dispatch", {
				machine: "demo",
				project: "demo",
				prompt: "while the disk is full",
			});
			notes.push(
				`t3_dispatch on a full disk: isError=${refused.isError}: ${refused.text.slice(0, 200)}`,
			);
			// Runs finish while nothing can be written.
			for (const id of ids) sim.finishRun(id);
			await until(
				() => ids.every((id) => latestRunStatus(sim, id) === "completed"),
				10_000,
				"runs completed on the sim",
			);
			await Bun.sleep(500);
			const machines = await call(stack.client, "t3_machines");
			const health = await fetch(`${stack.server.url}/healthz`);
			const healthBody = await health.text();
			notes.push(
				`while full: t3_machines isError=${machines.isError}; /healthz ${health.status} ${healthBody.slice(0, 300)}`,
			);
			const storageLogs = stack.logs.filter((l) =>
				/full|SQLITE|disk/i.test(JSON.stringify(l)),
			);
			notes.push(
				`while full: ${storageLogs.length} log lines mention the disk; first: ${storageLogs[0] ? JSON.stringify(storageLogs[0]).slice(0, 300) : "none"}`,
			);
			const problems: string[] = [];
			if (machines.isError || health.status !== 200)
				problems.push("the server stopped serving on a full disk");
			if (!refused.isError)
				problems.push("t3_dispatch on a full disk did not fail");
			else if (!/disk|full|space|storage/i.test(refused.text))
				problems.push(
					`t3_dispatch on a full disk does not say why: "${refused.text}"`,
				);
			if (!/disk|full|storage|sqlite/i.test(healthBody))
				problems.push("/healthz shows no storage error while the disk is full");
			// Space returns.
			rmSync(filler);
			const unaided = await eventually(
				() => stack.receiver.deliveries.length >= 1 + ids.length,
				5_000,
			);
			notes.push(
				unaided
					? "space back: events of runs that finished meanwhile arrived without help"
					: "space back: events of runs that finished meanwhile did NOT arrive within 5 s without a reconnect; forcing one (sim.dropSockets)",
			);
			if (!unaided) {
				problems.push(
					"runs that finished while the disk was full got their events only after a reconnect",
				);
				sim.dropSockets();
			}
			const after = await dispatchUntilAccepted(
				stack.client,
				"demo",
				"say hello after",
			);
			notes.push(`space back: dispatch ${after ? "works" : "still fails"}`);
			const report = await settleStack("full-disk", stack, startedAt, {
				notes,
			});
			const db = new Database(statePath, { readonly: true });
			const integrity = (
				db.query("PRAGMA integrity_check").get() as { integrity_check: string }
			).integrity_check;
			db.close();
			report.notes.push(`PRAGMA integrity_check: ${integrity}`);
			if (integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
			if (!after) problems.push("dispatch still fails after space returned");
			report.problems.push(...problems);
			return report;
		} finally {
			await stack.stop();
		}
	} finally {
		Bun.spawnSync(["umount", base]);
		rmSync(base, { recursive: true, force: true });
	}
}
