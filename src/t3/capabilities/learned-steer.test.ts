import { describe, expect, it } from "bun:test";
import type { Machine } from "../machine-api.ts";
import type { ProviderSession, ThreadProjection } from "../model.ts";
import {
	learnedSteer,
	learningSteer,
	noteSessionSteer,
} from "./learned-steer.ts";

const turns = (live: boolean, restart: boolean) => ({
	capabilities: {
		turns: {
			supportsActiveSteering: live,
			supportsSteeringByInterruptRestart: restart,
		},
	},
});
const projection = (sessions: ProviderSession[]) =>
	({ providerSessions: sessions }) as unknown as ThreadProjection;

describe("how provider sessions steer, learned per machine and instance", () => {
	it("records each instance's report, the later session winning; says nothing without one", () => {
		const machine = {} as Machine;
		expect(learnedSteer(machine, "a")).toBeUndefined();
		noteSessionSteer(
			machine,
			projection([
				{ id: "s1", providerInstanceId: "a", ...turns(true, true) },
				{ id: "s2", providerInstanceId: "a", ...turns(false, true) },
				{ id: "s3", providerInstanceId: "b", ...turns(false, false) },
				// Pre-release sessions carry no capabilities: nothing learned.
				{ id: "s4", providerInstanceId: "c" },
				{ id: "s5", providerInstanceId: "d", capabilities: { turns: {} } },
			]),
		);
		expect(learnedSteer(machine, "a")).toBe("restart");
		expect(learnedSteer(machine, "b")).toBe("none");
		expect(learnedSteer(machine, "c")).toBeUndefined();
		expect(learnedSteer(machine, "d")).toBeUndefined();
		// Another machine learned nothing.
		expect(learnedSteer({} as Machine, "a")).toBeUndefined();
		// A newer report (an upgraded provider) replaces the old one.
		noteSessionSteer(
			machine,
			projection([{ id: "s6", providerInstanceId: "a", ...turns(true, true) }]),
		);
		expect(learnedSteer(machine, "a")).toBe("live");
	});

	it("the wrapped machine notes every projection read through it, and passes the read through", async () => {
		const detail = {
			snapshotSequence: 3,
			projection: projection([
				{ id: "s", providerInstanceId: "x", ...turns(false, true) },
			]),
		};
		const seen: unknown[] = [];
		const inner = {
			name: "m",
			async getThread(id: string, options: unknown) {
				seen.push([id, options]);
				return detail;
			},
		} as unknown as Machine;
		const machine = learningSteer(inner);
		expect(machine.name).toBe("m");
		expect(learnedSteer(machine, "x")).toBeUndefined();
		const covers = () => true;
		expect(await machine.getThread("t", { covers })).toBe(detail);
		expect(seen).toEqual([["t", { covers }]]);
		expect(learnedSteer(machine, "x")).toBe("restart");
	});
});
