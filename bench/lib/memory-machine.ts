/**
 * A T3 machine held in memory, as a synchronized connector holds its shell: one project "demo"
 * and the threads `shell(n)` makes, always online, never changing. For the benches that time the
 * connector's own work over many machines (placement, the console's first byte) with no sockets.
 */
import type { MachineConfig } from "../../src/config/types.ts";
import type { Machine, ShellChange } from "../../src/t3/machine-api.ts";
import type { ProjectShell, ThreadShell } from "../../src/t3/model.ts";

export function memoryMachine(
	name: string,
	index: number,
	threads: number,
	/** Thread `t` of this machine (its id given), as the bench wants it. */
	shell: (id: string, t: number, project: ProjectShell) => ThreadShell,
	extra: Record<string, unknown> = {},
): Machine {
	const project: ProjectShell = {
		id: `p-${index}`,
		title: "demo",
		workspaceRoot: "/srv/t3/demo",
		defaultModelSelection: null,
	};
	const shells = new Map<string, ThreadShell>();
	for (let t = 0; t < threads; t++) {
		const id = `${name}-t${t}`;
		shells.set(id, shell(id, t, project));
	}
	const list = [...shells.values()];
	const projects = [project];
	const status = {
		state: "online" as const,
		reason: null,
		serverVersion: "sim",
		lastEventAt: null,
	};
	return {
		name,
		url: "http://127.0.0.1:1",
		status: () => status,
		projects: () => projects,
		threads: () => list,
		thread: (id: string) => shells.get(id),
		sequence: () => 1,
		onChange: (_listener: (c: ShellChange) => void) => () => undefined,
		ready: async () => undefined,
		settled: async () => undefined,
		start: () => undefined,
		stop: async () => undefined,
		...extra,
	} as unknown as Machine;
}

/** `count` machine configs m001, m002, … (every project, a default model), with `extra` each. */
export function memoryMachineConfigs(
	count: number,
	extra: Partial<MachineConfig> = {},
): MachineConfig[] {
	return Array.from({ length: count }, (_, i) => ({
		name: `m${String(i + 1).padStart(3, "0")}`,
		url: "http://127.0.0.1:1",
		tokenEnv: "T",
		tokenFile: null,
		token: "t",
		projects: ["*"],
		model: { instanceId: "claudeAgent", model: "claude-opus-5" },
		options: [],
		...extra,
	}));
}
