/**
 * The simulator's server configuration as it changes: the providers `server.getConfig`
 * reports, and `subscribeServerConfig` (PROTOCOL.md §2.6, §4.4), which T3 uses to tell
 * clients the config changed: first `{version: 1, type: "snapshot", config}`, then
 * `{version: 1, type: "providerStatuses", payload: {providers}}` whenever a provider's
 * status, auth, models or usage change (upstream contracts `ServerConfigStreamEvent`): the
 * full list each time, at most every 200 ms and never twice the same
 * (`PROVIDER_STATUS_DEBOUNCE_MS`, USAGE-AND-QUEUES.md §1.2).
 */

import { defaultProviders } from "../agent/providers.ts";
import type { SimContext } from "../context.ts";
import { serverConfig } from "./server-config.ts";

export const PROVIDER_STATUS_DEBOUNCE_MS = 200;

export interface SimConfigState {
	providers: Record<string, unknown>[];
	listeners: Set<(item: unknown) => void>;
	/** When the last `providerStatuses` went out (epoch ms), and what it said. */
	lastPushAt: number;
	lastPushed: string | null;
	/** Cancels the push scheduled for the end of the debounce window, if any. */
	pending: (() => void) | null;
}

export function createConfigState(
	providers: Record<string, unknown>[] = defaultProviders(),
): SimConfigState {
	return {
		providers,
		listeners: new Set(),
		lastPushAt: 0,
		lastPushed: null,
		pending: null,
	};
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
	if (notify) notifyProviders(ctx);
}

/** Pushes the provider list now, or at the end of the debounce window when one went out lately. */
export function notifyProviders(ctx: SimContext): void {
	const state = ctx.config;
	if (state.pending) return; // the scheduled push will carry the newest list
	const wait = state.lastPushAt + PROVIDER_STATUS_DEBOUNCE_MS - Date.now();
	if (wait <= 0) {
		pushProviders(ctx);
		return;
	}
	state.pending = ctx.scheduler.later(wait, () => {
		state.pending = null;
		pushProviders(ctx);
	});
}

function pushProviders(ctx: SimContext): void {
	const state = ctx.config;
	const providers = structuredClone(state.providers);
	const text = JSON.stringify(providers);
	if (text === state.lastPushed) return;
	state.lastPushed = text;
	state.lastPushAt = Date.now();
	const item = { version: 1, type: "providerStatuses", payload: { providers } };
	for (const listener of [...state.listeners]) listener(item);
}
