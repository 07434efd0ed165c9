import { describe, expect, it } from "bun:test";
import type { MachineRow, Overview } from "./overview.ts";
import { MACHINES_LISTED, overviewPage } from "./overview-page.tsx";

const machine = (
	name: string,
	rights: Partial<MachineRow> = {},
): MachineRow => ({
	name,
	state: "online",
	reason: null,
	runs: 1,
	token_expires_at: null,
	token_warning: false,
	active_runs: 0,
	max_active_runs: null,
	usage: [],
	...rights,
});

const page = (machines: MachineRow[]) => {
	const data: Overview = {
		machines,
		attention: [],
		active: [],
		settled: [],
		more: { attention: false, active: false },
		next: null,
		unavailable: [],
		outbox: null,
	};
	return overviewPage({
		viewer: {
			client: "boss",
			access: "read-only",
			approve: true,
			csrf: "c",
			signedIn: true,
		},
		data,
		now: Date.now(),
		paged: false,
		since: 0,
	});
};

describe("the overview's machines", () => {
	it("lists every machine of a small fleet", () => {
		const html = page(
			Array.from({ length: MACHINES_LISTED }, (_, i) => machine(`m${i}`)),
		);
		expect(html.match(/data-machine="/g)).toHaveLength(MACHINES_LISTED);
		expect(html).not.toContain('href="/console/machines"');
	});

	it("in a large fleet, lists those that need a look and one line for the rest", () => {
		const machines = Array.from({ length: 500 }, (_, i) => machine(`m${i}`));
		machines[7] = machine("m7", {
			state: "offline",
			reason: 'machine "m7": <b>refused</b>',
			runs: 0,
		});
		machines[9] = machine("m9", { token_warning: true, token_expires_at: 1 });
		const html = page(machines);
		expect(html.match(/data-machine="/g)).toHaveLength(2);
		expect(html).toContain('data-machine="m7"');
		expect(html).toContain('data-machine="m9"');
		expect(html).toContain("&lt;b&gt;refused&lt;/b&gt;");
		expect(html).toContain('href="/console/machines"');
		expect(html).toContain("498 more online");
		expect(html).toContain("498 runs going");
	});
});
