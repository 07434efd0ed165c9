/**
 * A fleet of one fake machine serving a fixed shell and projection, for unit tests of the
 * thread and event logic without a network. `emit` plays a shell change to its listeners.
 */
import type { MachineConfig } from "../../src/config/types.ts";
import { createFleet, type Fleet } from "../../src/fleet/fleet.ts";
import type {
	Machine,
	MachineStatus,
	ShellChange,
} from "../../src/t3/machine-api.ts";
import type {
	ProjectShell,
	ThreadProjection,
	ThreadShell,
} from "../../src/t3/model.ts";

/** A machine status that says online (`serverVersion` as given). */
export function onlineStatus(
	serverVersion: string | null = null,
): MachineStatus {
	return { state: "online", reason: null, serverVersion, lastEventAt: null };
}

export const FAKE_PROJECT: ProjectShell = {
	id: "p1",
	title: "demo",
	workspaceRoot: "/srv/demo",
	defaultModelSelection: null,
};

export function fakeFleet(
	shell: ThreadShell,
	projection: ThreadProjection,
): { fleet: Fleet; emit: (change: ShellChange) => void } {
	return fakeFleetOf({
		status: () => onlineStatus("x"),
		projects: () => [FAKE_PROJECT],
		threads: () => [shell],
		thread: (id: string) => (id === shell.id ? shell : undefined),
		getThread: async () => ({ snapshotSequence: 1, projection }),
	});
}

/** A machine's config as the fleet takes it: every project allowed, token "t". */
export function fakeMachineConfig(
	name: string,
	url = "http://127.0.0.1:1",
): MachineConfig {
	return {
		name,
		url,
		tokenEnv: "T",
		tokenFile: null,
		token: "t",
		projects: ["*"],
		model: null,
		options: [],
	} as MachineConfig;
}

/**
 * A fleet of one machine "m" made of `parts` (the Machine methods a test needs) plus `onChange`,
 * whose listeners `emit` calls.
 */
export function fakeFleetOf(parts: Record<string, unknown>) {
	const listeners = new Set<(change: ShellChange) => void>();
	const machine = {
		name: "m",
		url: "http://127.0.0.1:1",
		onChange(listener: (change: ShellChange) => void) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		...parts,
	} as unknown as Machine;
	const fleet = createFleet(
		[fakeMachineConfig("m", machine.url)],
		() => machine,
	);
	const entry = fleet.list()[0] as ReturnType<Fleet["list"]>[number];
	const emit = (change: ShellChange) => {
		for (const listener of listeners) listener(change);
	};
	return { fleet, entry, emit };
}
