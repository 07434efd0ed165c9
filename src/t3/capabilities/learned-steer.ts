/**
 * How each provider instance of a machine steers, as its provider sessions last reported it
 * (`providerSessions[].capabilities.turns`): what `t3_models` shows before the catalog's guess
 * (a provider row's capabilities, else the driver table, steering.ts). Sessions live in thread
 * projections, so every projection read through the machine is noted; the newest report wins
 * (an upgraded provider reports anew). Pure protocol; no MCP.
 */

import { isRecord } from "../decode/json.ts";
import type { Machine } from "../machine-api.ts";
import type { ThreadProjection } from "../model.ts";
import { type Steer, steerOf } from "./steering.ts";

const learned = new WeakMap<Machine, Map<string, Steer>>();

/** Records how the projection's provider sessions steer, per instance (later sessions win). */
export function noteSessionSteer(
	machine: Machine,
	projection: ThreadProjection,
): void {
	for (const session of projection.providerSessions) {
		const instance = session.providerInstanceId;
		const capabilities = session.capabilities;
		if (typeof instance !== "string" || !isRecord(capabilities)) continue;
		const steer = steerOf(capabilities.turns);
		if (!steer) continue;
		let byInstance = learned.get(machine);
		if (!byInstance) {
			byInstance = new Map();
			learned.set(machine, byInstance);
		}
		byInstance.set(instance, steer);
	}
}

/** How the instance's sessions steer, as last reported; undefined when none has said. */
export function learnedSteer(
	machine: Machine,
	instanceId: string,
): Steer | undefined {
	return learned.get(machine)?.get(instanceId);
}

/** The machine, noting the provider sessions of every projection read through it. */
export function learningSteer(inner: Machine): Machine {
	const machine: Machine = {
		...inner,
		async getThread(threadId, options) {
			const detail = await inner.getThread(threadId, options);
			noteSessionSteer(machine, detail.projection);
			return detail;
		},
	};
	return machine;
}
