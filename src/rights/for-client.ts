/**
 * The services as one client sees them: its reach as the fleet (scoped-fleet.ts), thread
 * records and idempotency keys judged by that reach, keys in the client's own namespace, and
 * the client itself on the thread operations (levels, `max_active_runs`). Made once per client
 * and kept, so per-entry memos stay warm. The client `default` with full rights sees the
 * services themselves: a config without clients behaves exactly as before.
 */
import { DEFAULT_CLIENT } from "../config/clients.ts";
import type { ClientConfig } from "../config/types.ts";
import type { Services } from "../services.ts";
import {
	createOperationStore,
	hiddenOperation,
	type OperationStore,
} from "../store/operations.ts";
import { createThreadStore } from "../store/threads.ts";
import { reachesEverything, scopeFleet } from "./scoped-fleet.ts";

/** Whether a client is exactly the old single bearer: every right, the shared key space. */
export function isUnbounded(client: ClientConfig): boolean {
	return (
		client.name === DEFAULT_CLIENT &&
		client.access === "full-access" &&
		client.approve &&
		client.maxActiveRuns === null &&
		reachesEverything(client)
	);
}

const scoped = new WeakMap<Services, Map<string, Services>>();

export function servicesForClient(
	services: Services,
	client: ClientConfig,
): Services {
	if (isUnbounded(client)) return services;
	let byClient = scoped.get(services);
	if (!byClient) {
		byClient = new Map();
		scoped.set(services, byClient);
	}
	const kept = byClient.get(client.name);
	// A reload may have replaced the client (a new token, other rights): its view with it.
	if (kept && kept.threadDeps.client === client) return kept;
	const fleet = scopeFleet(services.fleet, client);
	const threads = createThreadStore(services.db, (r) => fleet.allowsRecord(r));
	const operations = namespaced(
		createOperationStore(
			services.db,
			hiddenOperation(threads.isHidden, (r) => fleet.allowsRecord(r)),
		),
		client.name,
	);
	const threadDeps = {
		...services.threadDeps,
		fleet,
		threads,
		operations,
		client,
	};
	const view: Services = {
		...services,
		fleet,
		threadDeps,
		tasks: services.tasks.forClient(client.name, threadDeps),
	};
	byClient.set(client.name, view);
	return view;
}

const forgetting = new WeakMap<Services, Set<() => void>>();

/** Drops every client's view (a reload): the next request makes its client's anew. */
export function forgetClientViews(services: Services): void {
	scoped.delete(services);
	// What else holds a client as it was (the console's sessions and live streams) checks it now.
	for (const listener of forgetting.get(services) ?? []) listener();
}

/**
 * Calls `listener` each time the clients' views are dropped (a reload): holders of a client
 * object check it against the config as it is now. Returns the unsubscribe function.
 */
export function onClientViewsForgotten(
	services: Services,
	listener: () => void,
): () => void {
	let listeners = forgetting.get(services);
	if (!listeners) {
		listeners = new Set();
		forgetting.set(services, listeners);
	}
	listeners.add(listener);
	return () => listeners.delete(listener);
}

/**
 * Idempotency keys per client: the same key from two clients names two operations. The key is
 * stored under the client's name; rows come back with the key as the client gave it.
 */
function namespaced(store: OperationStore, client: string): OperationStore {
	const prefix = `${client}\u001f`;
	const own = (key: string) => `${prefix}${key}`;
	return {
		get(tool, key) {
			const row = store.get(tool, own(key));
			return row === undefined || row === "hidden" ? row : { ...row, key };
		},
		insert: (row) => store.insert({ ...row, key: own(row.key) }),
		complete: (tool, key, threadId, result, place) =>
			store.complete(tool, own(key), threadId, result, place),
		remove: (tool, key) => store.remove(tool, own(key)),
		removeRef: (tool, ref) => store.removeRef(tool, ref),
		moveRef: (tool, key, from, to) => store.moveRef(tool, own(key), from, to),
	};
}
