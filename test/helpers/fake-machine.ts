/**
 * A fleet of one fake machine serving a fixed shell and projection, for unit tests of the
 * thread and event logic without a network. `emit` plays a shell change to its listeners.
 */
import { createFleet, type Fleet } from "../../src/fleet/fleet.ts";
import type { Machine, ShellChange } from "../../src/t3/machine-api.ts";
import type {
	ProjectShell,
	ThreadProjection,
	ThreadShell,
} from "../../src/t3/model.ts";

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
	const listeners = new Set<(change: ShellChange) => void>();
	const machine = {
		name: "m",
		url: "http://127.0.0.1:1",
		status: () => ({
			state: "online",
			reason: null,
			serverVersion: "x",
			lastEventAt: null,
		}),
		projects: () => [FAKE_PROJECT],
		threads: () => [shell],
		thread: (id: string) => (id === shell.id ? shell : undefined),
		onChange(listener: (change: ShellChange) => void) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		getThread: async () => ({ snapshotSequence: 1, projection }),
	} as unknown as Machine;
	const fleet = createFleet(
		[
			{
				name: "m",
				url: machine.url,
				tokenEnv: "T",
				token: "t",
				projects: ["*"],
				model: null,
				options: [],
			},
		],
		() => machine,
	);
	return {
		fleet,
		emit: (change) => {
			for (const listener of listeners) listener(change);
		},
	};
}
