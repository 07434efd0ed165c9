/**
 * Issue 26 item 14: after T3 restarts, `t3_machines` lists each machine once, with each of its
 * projects once (a black-box pass saw one machine listed three times after three restarts).
 * Each restart is waited out through the machine's own state: offline, then online again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
	callTool,
	type Stack,
	startStack,
	until,
	untilMachinesOnline,
} from "../helpers/stack.ts";

let stack: Stack;

beforeAll(async () => {
	stack = await startStack();
});
afterAll(async () => {
	await stack?.stop();
});

type Listed = {
	machines: { name: string; state: string; projects: string[] }[];
};

test("three T3 restarts later, t3_machines and t3_projects list everything once", async () => {
	const client = await stack.client();
	await untilMachinesOnline(client);
	const before = (await callTool<Listed>(client, "t3_machines")).data;
	const machine = stack.server.services.fleet.get("demo")?.machine;
	for (let i = 0; i < 3; i++) {
		await stack.sim().restart();
		await until(() => machine?.status().state !== "online", 10_000, "offline");
		await until(() => machine?.status().state === "online", 15_000, "online");
		// A call between restarts too: an answer kept from before must not be what comes back.
		const between = (await callTool<Listed>(client, "t3_machines")).data;
		expect(between.machines.map((m) => m.name)).toEqual(["demo"]);
	}
	const after = (await callTool<Listed>(client, "t3_machines")).data;
	expect(after.machines.map((m) => m.name)).toEqual(["demo"]);
	const [demo] = after.machines;
	expect(demo?.state).toBe("online");
	expect(new Set(demo?.projects).size).toBe(demo?.projects.length ?? -1);
	expect(demo?.projects).toEqual(before.machines[0]?.projects ?? []);
	const projects = (
		await callTool<{ projects: { id: string }[] }>(client, "t3_projects", {
			machine: "demo",
		})
	).data.projects;
	expect(new Set(projects.map((p) => p.id)).size).toBe(projects.length);
	await client.close();
}, 60_000);
