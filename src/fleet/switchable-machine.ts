/**
 * A machine whose connection can be replaced while it runs (a config reload changed its url or
 * token): one object to everyone who holds it, with the listeners moved onto the new
 * connection, so to them the switch looks like a dropped connection coming back (connecting,
 * snapshot, synchronized). Retiring it tells the listeners `{kind: "removed"}` before it stops.
 */
import type { MachineConfig } from "../config/types.ts";
import type { Machine, ShellChange } from "../t3/machine-api.ts";

type Listener = (change: ShellChange) => void;

export function switchableMachine(
	config: MachineConfig,
	connect: (config: MachineConfig) => Machine,
): Machine {
	let current = connect(config);
	let running = false;
	/** Each listener and its subscription on the current connection. */
	const listeners = new Map<Listener, () => void>();
	const machine = {} as Record<string, unknown>;
	// Every method of the connection, called on whichever connection is current at the call.
	for (const [key, value] of Object.entries(current))
		if (typeof value === "function")
			machine[key] = (...args: unknown[]) =>
				(current as unknown as Record<string, (...a: unknown[]) => unknown>)[
					key
				]?.(...args);
	Object.defineProperty(machine, "name", {
		value: current.name,
		enumerable: true,
	});
	Object.defineProperty(machine, "url", {
		get: () => current.url,
		enumerable: true,
	});
	const switchable = machine as unknown as Machine;
	switchable.onChange = (listener) => {
		listeners.set(listener, current.onChange(listener));
		return () => {
			listeners.get(listener)?.();
			listeners.delete(listener);
		};
	};
	switchable.start = () => {
		running = true;
		current.start();
	};
	switchable.stop = () => {
		running = false;
		return current.stop();
	};
	switchable.reconnect = async (next) => {
		const old = current;
		current = connect(next);
		// Off the old connection first: its "stopped" is not this machine's state.
		for (const [listener, unsubscribe] of listeners) {
			unsubscribe();
			listeners.set(listener, current.onChange(listener));
		}
		await old.stop();
		if (running) current.start();
	};
	switchable.retire = async () => {
		running = false;
		for (const listener of [...listeners.keys()]) {
			try {
				listener({ kind: "removed" });
			} catch {
				// One listener's failure must not keep the others from hearing it.
			}
		}
		await current.stop();
	};
	return switchable;
}
