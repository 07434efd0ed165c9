/**
 * How a provider takes a message while its run is going (`t3_models` `steer`): `live` (the
 * message joins the running turn, `steer_active`), `restart` (only by interrupting the turn and
 * starting it again with the message, `restart_active`), or `none`. T3 reports it per provider
 * session (`providerSessions[].capabilities.turns`, RELEASED-0.1.md §1); a provider row that
 * carries the same `capabilities.turns` is read the same way. Pure; no MCP.
 */
import { isRecord } from "../decode/json.ts";
import type { ThreadProjection } from "../model.ts";

export type Steer = "live" | "restart" | "none";

/**
 * Drivers whose T3 capability declaration steers only by restart (T3's Grok adapter:
 * `supportsActiveSteering: false`, `supportsSteeringByInterruptRestart: true`). Used only when
 * nothing T3 sent says how an instance steers; every other driver steers live, as all did
 * before 0.1.x.
 */
const RESTART_ONLY_DRIVERS = new Set(["grok"]);

/** From a `capabilities.turns` object; undefined when it says nothing about steering. */
export function steerOf(turns: unknown): Steer | undefined {
	if (!isRecord(turns)) return undefined;
	const live = turns.supportsActiveSteering;
	const restart = turns.supportsSteeringByInterruptRestart;
	if (typeof live !== "boolean" && typeof restart !== "boolean")
		return undefined;
	if (live !== false) return "live";
	return restart === false ? "none" : "restart";
}

export function driverSteer(driver: string | undefined): Steer {
	return driver !== undefined && RESTART_ONLY_DRIVERS.has(driver)
		? "restart"
		: "live";
}

/** How the thread's provider session for `instanceId` steers, as T3 reports it. */
export function sessionSteer(
	projection: ThreadProjection,
	instanceId: string | undefined,
): Steer | undefined {
	const sessions = projection.providerSessions.filter(
		(s) => instanceId === undefined || s.providerInstanceId === instanceId,
	);
	for (const session of sessions.reverse()) {
		const capabilities = session.capabilities;
		const steer = isRecord(capabilities)
			? steerOf(capabilities.turns)
			: undefined;
		if (steer) return steer;
	}
	return undefined;
}
