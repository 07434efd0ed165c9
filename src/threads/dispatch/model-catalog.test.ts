import { describe, expect, it } from "bun:test";
import {
	fakeFleetOf,
	onlineStatus,
} from "../../../test/helpers/fake-machine.ts";
import { noteSessionSteer } from "../../t3/capabilities/learned-steer.ts";
import { createModelCatalog, listModels } from "./model-catalog.ts";

/** One machine whose `server.getConfig` answers are released by the test, one by one. */
function setup() {
	const reads: { resolve(config: unknown): void; reject(e: Error): void }[] =
		[];
	const { fleet, entry, emit } = fakeFleetOf({
		serverConfig: () =>
			new Promise((resolve, reject) => reads.push({ resolve, reject })),
	});
	const config = (instanceId: string) => ({
		providers: [{ instanceId, models: [{ slug: "x", name: "X" }] }],
	});
	return { catalog: createModelCatalog(fleet), entry, reads, emit, config };
}

describe("model catalog cache", () => {
	it("reads once, and again after a config change or a state change", async () => {
		const { catalog, entry, reads, emit, config } = setup();
		const first = catalog.providers(entry);
		expect(catalog.providers(entry)).toBe(first);
		reads[0]?.resolve(config("a"));
		expect((await first)[0]?.instanceId).toBe("a");
		expect(catalog.providers(entry)).toBe(first);
		expect(reads.length).toBe(1);
		emit({ kind: "config" });
		const second = catalog.providers(entry);
		reads[1]?.resolve(config("b"));
		expect((await second)[0]?.instanceId).toBe("b");
		emit({
			kind: "state",
			status: onlineStatus(),
		});
		void catalog.providers(entry);
		expect(reads.length).toBe(3);
	});

	it("does not keep a read that was in flight when the config changed, nor a failed one", async () => {
		const { catalog, entry, reads, emit, config } = setup();
		const stale = catalog.providers(entry);
		emit({ kind: "config" });
		const fresh = catalog.providers(entry);
		expect(fresh).not.toBe(stale);
		reads[0]?.resolve(config("old"));
		await stale;
		expect(catalog.providers(entry)).toBe(fresh);
		reads[1]?.reject(new Error("socket closed"));
		await expect(fresh).rejects.toThrow("socket closed");
		const retry = catalog.providers(entry);
		expect(retry).not.toBe(fresh);
		reads[2]?.resolve(config("new"));
		expect((await retry)[0]?.instanceId).toBe("new");
	});
});

describe("t3_models steer", () => {
	it("is what the instance's provider sessions reported, else the catalog's guess", async () => {
		const { fleet, entry } = fakeFleetOf({
			status: () => onlineStatus("x"),
			serverConfig: async () => ({
				providers: [
					{ instanceId: "a", driver: "newdriver", models: [{ slug: "x" }] },
					{ instanceId: "b", driver: "grok", models: [{ slug: "y" }] },
				],
			}),
		});
		const deps = { fleet, catalog: createModelCatalog(fleet) } as never;
		const steer = async () =>
			(await listModels(deps, "m")).models.map((m) => [m.model, m.steer]);
		expect(await steer()).toEqual([
			["a/x", "live"],
			["b/y", "restart"],
		]);
		noteSessionSteer(entry.machine, {
			providerSessions: [
				{
					id: "s",
					providerInstanceId: "a",
					capabilities: {
						turns: {
							supportsActiveSteering: false,
							supportsSteeringByInterruptRestart: true,
						},
					},
				},
			],
		} as never);
		expect(await steer()).toEqual([
			["a/x", "restart"],
			["b/y", "restart"],
		]);
	});
});
