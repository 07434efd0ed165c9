import { expect, test } from "bun:test";
import { HELP } from "./help.ts";
import { xdgDefaults } from "./stdio.ts";

test("XDG defaults: the variables when absolute, else ~/.config and ~/.local/state", () => {
	expect(
		xdgDefaults({
			HOME: "/home/u",
			XDG_CONFIG_HOME: "/cfg",
			XDG_STATE_HOME: "/st",
		}),
	).toEqual({
		configFile: "/cfg/t3code-mcp/t3code.toml",
		statePath: "/st/t3code-mcp/t3code-mcp.sqlite",
	});
	// Unset, empty or relative values are ignored, as the XDG spec says.
	expect(
		xdgDefaults({
			HOME: "/home/u",
			XDG_CONFIG_HOME: "",
			XDG_STATE_HOME: "rel",
		}),
	).toEqual({
		configFile: "/home/u/.config/t3code-mcp/t3code.toml",
		statePath: "/home/u/.local/state/t3code-mcp/t3code-mcp.sqlite",
	});
});

test("--help lists stdio", () => {
	expect(HELP).toMatch(/^ {2}stdio {12}the same tools over MCP stdio/m);
});
