import { describe, expect, it } from "bun:test";
import { fullRights } from "../config/clients.ts";
import { whoMayCall } from "./who-may-call.ts";

const agent = fullRights("agent", "agent-token-0123456789");
const human = { ...fullRights("human", undefined), tokenEnv: "HUMAN_TOKEN" };
const token = "server-token-0123456789";

describe("the start log says exactly who may call /mcp", () => {
	it("clients by name, T3CODE_MCP_TOKEN as default, those without a token apart", () => {
		const who = whoMayCall({
			server: { token },
			clients: [fullRights("default", token), agent, human],
		});
		expect(who).toEqual({
			mcp: "clients only, each with its own bearer: default (T3CODE_MCP_TOKEN), agent; without a token, so not yet: human",
			clients: ["default", "agent"],
		});
		expect(JSON.stringify(who)).not.toContain("0123456789");
	});

	it("never open while clients are configured, even when none has a token", () => {
		const who = whoMayCall({ server: { token: undefined }, clients: [human] });
		expect(who).toEqual({
			mcp: "no one: no client has a token yet (human)",
			clients: [],
		});
		expect(who.mcp).not.toContain("open");
	});

	it("T3CODE_MCP_TOKEN alone: its holder, as client default", () => {
		expect(whoMayCall({ server: { token }, clients: [] })).toEqual({
			mcp: "T3CODE_MCP_TOKEN needed (client default)",
			clients: ["default"],
		});
	});

	it("open only with neither clients nor T3CODE_MCP_TOKEN", () => {
		expect(whoMayCall({ server: { token: undefined }, clients: [] })).toEqual({
			mcp: "open to anyone who can reach it (no [clients.*], T3CODE_MCP_TOKEN unset)",
			clients: [],
		});
	});
});
