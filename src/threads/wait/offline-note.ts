/**
 * What a `t3_wait` that timed out says when a thread's machine is not online: which machine,
 * since when and why. A bare "timed out" would read as "the run is slow", while nothing of the
 * run can reach this connector until the machine is back.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";

export function offlineNote(
	entries: Iterable<FleetMachine>,
	now: number,
): string | undefined {
	const lines: string[] = [];
	for (const entry of new Set(entries)) {
		const status = entry.machine.status();
		if (status.state === "online") continue;
		const down = status.downSince ?? null;
		const since =
			down === null
				? ""
				: ` since ${new Date(down).toISOString()} (${Math.max(0, Math.round((now - down) / 1000))} s ago)`;
		const state = status.state === "connecting" ? "reconnecting" : status.state;
		lines.push(
			`Timed out waiting while machine "${entry.config.name}" is ${state}${since}${status.reason ? `: ${status.reason.replace(/\.$/, "")}` : ""}. The run may still be going there, but nothing of it reaches this connector until the machine is back (t3_machines shows its state); call t3_wait again then.`,
		);
	}
	return lines.length > 0 ? lines.join("\n") : undefined;
}
