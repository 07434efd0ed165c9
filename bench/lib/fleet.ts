/** Runs bench/lib/sim-fleet.ts as a subprocess and hands back its machines and seeded threads. */
import type { SimRef } from "./rpc.ts";

export interface Fleet {
	machines: SimRef[];
	threads: { threadId: string; machine: string; projectId: string }[];
	stop(): Promise<void>;
}

export async function startFleet(
	machines: number,
	threads: number,
): Promise<Fleet> {
	const { value, stop } = await spawnReporting<Omit<Fleet, "stop">>([
		process.execPath,
		// The simulators' own profile, like BENCH_CPU_PROF's of the connector (bench/README.md).
		...(process.env.BENCH_SIM_CPU_PROF
			? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_SIM_CPU_PROF]
			: []),
		new URL("sim-fleet.ts", import.meta.url).pathname,
		String(machines),
		String(threads),
	]);
	return { ...value, stop };
}

/**
 * Runs a bench subprocess that prints one JSON line when ready (then runs until SIGTERM);
 * hands back that value, the process and its stop function.
 */
export async function spawnReporting<T>(command: string[]): Promise<{
	value: T;
	proc: ReturnType<typeof Bun.spawn>;
	stop(): Promise<void>;
}> {
	const proc = Bun.spawn(command, {
		stdin: "pipe",
		stdout: "pipe",
		stderr: "inherit",
	});
	const reader = proc.stdout.getReader();
	const decoder = new TextDecoder();
	let text = "";
	const deadline = Date.now() + 120_000;
	while (!text.includes("\n")) {
		const { value, done } = await Promise.race([
			reader.read(),
			Bun.sleep(Math.max(0, deadline - Date.now())).then(() => ({
				value: undefined,
				done: true,
			})),
		]);
		if (done) {
			proc.kill("SIGKILL");
			throw new Error(`${command.join(" ")} did not report`);
		}
		text += decoder.decode(value);
	}
	reader.releaseLock();
	const value = JSON.parse(text.slice(0, text.indexOf("\n"))) as T;
	return {
		value,
		proc,
		async stop() {
			proc.kill("SIGTERM");
			const code = await Promise.race([
				proc.exited,
				Bun.sleep(5_000).then(() => null),
			]);
			if (code === null) {
				proc.kill("SIGKILL");
				await proc.exited;
			}
		},
	};
}
