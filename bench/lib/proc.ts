/** Footprint readings from /proc (Linux only): resident memory and CPU time of one process. */
import { readFileSync } from "node:fs";

export function rssMb(pid: number): number {
	const status = readFileSync(`/proc/${pid}/status`, "utf8");
	const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
	return Math.round((kb / 1024) * 10) / 10;
}

/** utime + stime in seconds (fields 14 and 15 of /proc/<pid>/stat, in clock ticks). */
export function cpuSeconds(pid: number): number {
	const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
	// The command name may contain spaces; fields are counted after its closing parenthesis.
	const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
	const ticks = Number(fields[11]) + Number(fields[12]);
	return ticks / CLOCK_TICKS;
}

/** sysconf(_SC_CLK_TCK) is 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

/** Peak resident memory so far (VmHWM), in MB. */
export function peakRssMb(pid: number): number {
	const status = readFileSync(`/proc/${pid}/status`, "utf8");
	const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
	return Math.round((kb / 1024) * 10) / 10;
}
