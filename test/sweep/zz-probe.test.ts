import { test } from "bun:test";
import { callTool, startStack } from "/work/main/test/helpers/stack.ts";

test("probe", async () => {
	const stack = await startStack();
	const c = await stack.client();
	const cases: [string, Record<string, unknown>][] = [
		["t3_projects", {}],
		["t3_projects", { machine: "" }],
		["t3_projects", { machine: 5 }],
		["t3_projects", { machine: "nope" }],
		["t3_dispatch", { machine: "demo", project: "demo" }],
		["t3_dispatch", { machine: "demo", project: "demo", prompt: "" }],
		[
			"t3_dispatch",
			{ machine: "demo", project: "demo", prompt: "x".repeat(3_000_000) },
		],
		["t3_dispatch", { machine: "demo", project: "nope", prompt: "hi" }],
		["t3_dispatch", { prompt: "hi" }],
		[
			"t3_dispatch",
			{ machine: "demo", project: "demo", prompt: "hi", model: "bad" },
		],
		["t3_wait", {}],
		["t3_wait", { thread_id: "nope" }],
		["t3_wait", { thread_id: "a", timeout: -1 }],
		["t3_wait", { thread_ids: [] }],
		["t3_thread", { thread_id: "x", turns: -1 }],
		["t3_thread", { thread_id: "x", turns: "a" }],
		["t3_answer", { thread_id: "x" }],
		["t3_answer", { thread_id: "x", decision: "maybe" }],
		["t3_interrupt", { thread_id: "x" }],
		["t3_watch", { thread_id: "x" }],
		["t3_watch", { thread_id: "x", enabled: "yes" }],
		["t3_watch", { thread_id: "x", enabled: true }],
		["t3_machines", { foo: 1 }],
	];
	for (const [n, a] of cases) {
		const t0 = performance.now();
		try {
			const r = await callTool(c, n, a);
			console.log(
				n,
				JSON.stringify(a).slice(0, 80),
				r.isError,
				r.text.slice(0, 300),
				Math.round(performance.now() - t0),
			);
		} catch (e) {
			console.log(n, "THREW", String(e).slice(0, 300));
		}
	}
	await stack.stop();
}, 60000);
