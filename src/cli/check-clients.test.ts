import { describe, expect, it } from "bun:test";
import { fullRights } from "../config/clients.ts";
import type { AppConfig, ClientConfig } from "../config/types.ts";
import { clientChecks } from "./check-clients.ts";

const machine = (name: string) => ({ name }) as AppConfig["machines"][number];
const config = (clients: ClientConfig[]): AppConfig =>
	({
		file: "/x/t3code.toml",
		machines: [machine("mac"), machine("linux-1")],
		clients,
		server: {},
	}) as unknown as AppConfig;

describe("check lists each client", () => {
	it("level, approver right, the machines it reaches now, its projects and its token source", () => {
		const [line] = clientChecks(
			config([
				{
					...fullRights("agent", "agent-token-0123456"),
					tokenEnv: "AGENT_TOKEN",
					access: "approval-required",
					approve: false,
					machines: ["linux-*"],
					projects: ["web"],
					maxActiveRuns: 2,
				},
			]),
		);
		expect(line).toEqual({
			name: "client agent",
			ok: true,
			detail:
				"access approval-required; does not approve; machines linux-1; projects web; max_active_runs 2; token from AGENT_TOKEN",
		});
		expect(JSON.stringify(line)).not.toContain("agent-token-0123456");
	});

	it("a ⚠ for a client that reaches no machine, and for one without a token", () => {
		const [nowhere, tokenless] = clientChecks(
			config([
				{ ...fullRights("lost", "lost-token-01234567"), machines: ["win-*"] },
				{ ...fullRights("later", undefined), tokenEnv: "LATER_TOKEN" },
			]),
		);
		expect(nowhere?.warning).toBe(true);
		expect(nowhere?.fix).toContain("match no configured machine");
		expect(tokenless?.warning).toBe(true);
		expect(tokenless?.detail).toContain("no token (LATER_TOKEN is empty)");
	});
});
