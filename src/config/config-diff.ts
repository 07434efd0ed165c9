/**
 * What a reloaded config changes for the clients and the `[server]` keys (CONTRACT.md
 * "Operators"); the machines are the fleet's to compare (fleet.ts `reconcile`). Pure: the
 * caller applies it and logs it.
 */
import type { AppConfig, ClientConfig, ServerSettings } from "./types.ts";

/** `[server]` keys fixed at start: a reload logs them as ignored. */
const FIXED_SERVER_KEYS = ["host", "port", "statePath"] as const;
/** `[server]` keys every use reads afresh: a reload applies them at once. */
const LIVE_SERVER_KEYS = ["waitTimeoutS", "publicUrl", "maxHeld"] as const;

export interface ConfigDiff {
	clients: { added: string[]; removed: string[]; changed: string[] };
	server: {
		/** Applied now. */
		applied: (keyof ServerSettings)[];
		/** Cannot change while running (host, port, state path). */
		ignored: (keyof ServerSettings)[];
		/** Read once at start: they apply at the next restart. */
		atRestart: (keyof ServerSettings)[];
	};
}

const sameClient = (a: ClientConfig, b: ClientConfig) => Bun.deepEquals(a, b);

/**
 * The clients of `next`, each unchanged one replaced by the running config's object, so what is
 * kept per client object (scoped views, cached answers) stays warm across a reload.
 */
export function keepUnchangedClients(
	running: ClientConfig[],
	next: ClientConfig[],
): ClientConfig[] {
	const byName = new Map(running.map((c) => [c.name, c]));
	return next.map((client) => {
		const before = byName.get(client.name);
		return before && sameClient(before, client) ? before : client;
	});
}

export function diffConfig(running: AppConfig, next: AppConfig): ConfigDiff {
	const before = new Map(running.clients.map((c) => [c.name, c]));
	const after = new Map(next.clients.map((c) => [c.name, c]));
	const changed = (key: keyof ServerSettings) =>
		!Bun.deepEquals(running.server[key], next.server[key]);
	const serverKeys = Object.keys(next.server) as (keyof ServerSettings)[];
	const fixed: readonly string[] = FIXED_SERVER_KEYS;
	const live: readonly string[] = LIVE_SERVER_KEYS;
	return {
		clients: {
			added: [...after.keys()].filter((n) => !before.has(n)),
			removed: [...before.keys()].filter((n) => !after.has(n)),
			changed: [...after.entries()]
				.filter(([n, c]) => {
					const was = before.get(n);
					return was !== undefined && !sameClient(was, c);
				})
				.map(([n]) => n),
		},
		server: {
			applied: serverKeys.filter((k) => live.includes(k) && changed(k)),
			ignored: serverKeys.filter((k) => fixed.includes(k) && changed(k)),
			atRestart: serverKeys.filter(
				(k) => !live.includes(k) && !fixed.includes(k) && changed(k),
			),
		},
	};
}
