/**
 * The simulator's server configuration as it changes: the providers `server.getConfig`
 * reports, and `subscribeServerConfig` (PROTOCOL.md §2.6, §4.4), which T3 uses to tell
 * clients the config changed: first `{version: 1, type: "snapshot", config}`, then
 * `{version: 1, type: "providerStatuses", payload: {providers}}` whenever a provider's
 * status, auth or models change (upstream contracts `ServerConfigStreamEvent`).
 */

import { defaultProviders } from "../agent/providers.ts";
import type { SimContext } from "../context.ts";
import { serverConfig } from "./server-config.ts";

export interface SimConfigState {
	providers: Record<string, unknown>[];
	listeners: Set<(item: unknown) => void>;
}

export function createConfigState(): SimConfigState {
	return { providers: defaultProviders(), listeners: new Set() };
}

export function openConfigStream(
	ctx: SimContext,
	push: (values: unknown[]) => void,
): () => void {
	push([{ version: 1, type: "snapshot", config: serverConfig(ctx) }]);
	const listener = (item: unknown) => push([item]);
	ctx.config.listeners.add(listener);
	return () => ctx.config.listeners.delete(listener);
}

/**
 * Merge `patch` into one provider instance (e.g. `{auth: {status: "authenticated"}}`) and,
 * unless `notify` is false, push the new provider list to every config subscriber.
 */
export function setProvider(
	ctx: SimContext,
	instanceId: string,
	patch: Record<string, unknown>,
	notify = true,
): void {
	const index = ctx.config.providers.findIndex(
		(p) => p.instanceId === instanceId,
	);
	const current = ctx.config.providers[index];
	if (!current) throw new Error(`sim: no provider instance ${instanceId}`);
	ctx.config.providers[index] = {
		...current,
		...patch,
		checkedAt: new Date().toISOString(),
	};
	if (!notify) return;
	const item = {
		version: 1,
		type: "providerStatuses",
		payload: { providers: structuredClone(ctx.config.providers) },
	};
	for (const listener of [...ctx.config.listeners]) listener(item);
}
