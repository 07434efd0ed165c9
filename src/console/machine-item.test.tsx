/** @jsxImportSource hono/jsx */
/** The console's machine row shows busy threads against the cap and a usage bar per provider (issue 46). */
import { expect, test } from "bun:test";
import { MachineItem } from "./view.tsx";

const row = {
	name: "mac",
	state: "online",
	reason: null,
	runs: 1,
	token_expires_at: null,
	token_warning: false,
	active_runs: 2,
	max_active_runs: 2,
	usage: [
		{ provider: "claudeAgent", label: "Session", used_percent: 83.4 },
		{ provider: "codex", label: "usage", used_percent: null },
	],
};

test("runs / cap and a usage bar per provider", () => {
	const html = String(<MachineItem machine={row} now={0} />);
	expect(html).toContain("2 / 2 busy");
	expect(html).toContain('data-provider="claudeAgent"');
	expect(html).toContain('<meter min="0" max="100" high="90" value="83.4">');
	expect(html).toContain("83 %");
	expect(html).toContain("codex usage unknown");
});

test("no cap, no usage: neither is shown", () => {
	const html = String(
		<MachineItem
			machine={{ ...row, max_active_runs: null, usage: [] }}
			now={0}
		/>,
	);
	expect(html).not.toContain("busy");
	expect(html).not.toContain("<meter");
});
