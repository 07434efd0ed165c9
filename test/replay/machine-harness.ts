/**
 * Shared setup of the replay tests: a machine under test with fast backoff and a log of its
 * changes, optionally on a loopback replay server, all stopped after each test.
 */
import { afterEach } from "bun:test";
import type { MachineConfig } from "../../src/config/types.ts";
import {
	createMachine,
	type MachineDeps,
} from "../../src/t3/connect/machine.ts";
import type {
	Machine,
	MachineState,
	ShellChange,
} from "../../src/t3/machine-api.ts";
import { silentLogger } from "../../src/util/log.ts";
import {
	REPLAY_TOKEN,
	type ReplayServer,
	type ReplayServerOptions,
	startReplayServer,
} from "./replay-server.ts";

export type Cleanups = (() => Promise<void> | void)[];

/** A list whose entries run, last first, after each test of the calling file. */
export function cleanupAfterEach(): Cleanups {
	const cleanups: Cleanups = [];
	afterEach(async () => {
		for (const c of cleanups.splice(0).reverse()) await c();
	});
	return cleanups;
}

/**
 * The config of machine `name` (token variable `T3_<NAME>_TOKEN`). `null` = the token
 * variable is unset (undefined would pick the default).
 */
export function replayConfig(
	name: string,
	url: string,
	token: string | null = REPLAY_TOKEN,
): MachineConfig {
	return {
		name,
		url,
		tokenEnv: `T3_${name.toUpperCase()}_TOKEN`,
		tokenFile: null,
		token: token ?? undefined,
		projects: [],
		model: null,
		options: [],
	};
}

/** A machine, not started yet, and the changes it reports; stopped at cleanup. */
export function watchedMachine(
	cleanups: Cleanups,
	config: MachineConfig,
	deps: Partial<MachineDeps> = {},
): { machine: Machine; changes: ShellChange[] } {
	const machine = createMachine(config, {
		log: silentLogger,
		backoff: { initialMs: 20, maxMs: 200, resetAfterMs: 1_000 },
		...deps,
	});
	const changes: ShellChange[] = [];
	machine.onChange((c) => changes.push(c));
	cleanups.push(() => machine.stop());
	return { machine, changes };
}

/** A replay server started from `options` and a started machine configured for its URL. */
export function startReplayMachine(
	cleanups: Cleanups,
	options: ReplayServerOptions,
	config: (url: string) => MachineConfig,
	deps: Partial<MachineDeps> = {},
): { server: ReplayServer; machine: Machine; changes: ShellChange[] } {
	const server = startReplayServer(options);
	cleanups.push(() => server.stop());
	const { machine, changes } = watchedMachine(
		cleanups,
		config(server.url),
		deps,
	);
	machine.start();
	return { server, machine, changes };
}

/** The machine states in a change log, in order. */
export function states(changes: ShellChange[]): MachineState[] {
	return changes.flatMap((c) => (c.kind === "state" ? [c.status.state] : []));
}
