/**
 * deploy/compose.yaml, parsed (no Docker engine or compose plugin here): the service name and
 * profile the gateway expects, a build context, the config mount, the /data volume, the env a
 * deployment needs, the binary as health check, port 8000 exposed.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "./helpers.ts";

const text = await Bun.file(join(ROOT, "deploy", "compose.yaml")).text();
const doc = Bun.YAML.parse(text) as {
	services: Record<string, Record<string, unknown>>;
	volumes: Record<string, unknown>;
};
const service = doc.services["t3code-mcp"] as {
	profiles: string[];
	build: { context: string; dockerfile: string; args: Record<string, string> };
	environment: Record<string, string>;
	volumes: string[];
	expose: string[];
	healthcheck: { test: string[] };
};

test("service t3code-mcp under profile t3, built from the repository", async () => {
	expect(service).toBeDefined();
	expect(service.profiles).toEqual(["t3"]);
	expect(service.build.context).toBe("..");
	expect(
		await Bun.file(
			join(ROOT, "deploy", service.build.context, service.build.dockerfile),
		).exists(),
	).toBe(true);
	expect(text).toContain(
		// biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, literally
		"context: https://github.com/t3code-mcp/t3code-mcp.git#${T3CODE_MCP_REF:-main}",
	);
	expect(service.build.args.VERSION).toContain("0.1.0");
});

test("config mount, named /data volume, port 8000, health check through the binary", () => {
	expect(service.volumes).toContain("./config:/config:ro");
	expect(service.volumes).toContain("t3code-mcp-data:/data");
	expect(Object.keys(doc.volumes)).toContain("t3code-mcp-data");
	expect(service.expose).toEqual(["8000"]);
	expect(service.healthcheck.test).toEqual([
		"CMD",
		"/usr/local/bin/t3code-mcp",
		"healthcheck",
	]);
});

test("tokens and hook settings come from the host environment, never literal", () => {
	for (const name of [
		"T3_MAC_TOKEN",
		"T3CODE_MCP_TOKEN",
		"T3CODE_MCP_HOOK_URL",
		"T3CODE_MCP_HOOK_TOKEN",
		"T3CODE_MCP_HOOK_SECRET",
	]) {
		expect(service.environment[name]).toMatch(
			new RegExp(`^\\$\\{${name}(:-[^}]*)?\\}$`),
		);
	}
});

test("two clients' tokens are Docker secrets from files, and the header shows the reload", () => {
	const secrets = (service as unknown as { secrets: string[] }).secrets;
	expect(secrets).toEqual(["agent_mcp_token", "approver_mcp_token"]);
	const top = (doc as unknown as { secrets: Record<string, { file: string }> })
		.secrets;
	expect(top.agent_mcp_token?.file).toBe("./secrets/agent.token");
	expect(top.approver_mcp_token?.file).toBe("./secrets/approver.token");
	expect(text).toContain('token_file = "/run/secrets/agent_mcp_token"');
	expect(text).toContain('token_file = "/run/secrets/approver_mcp_token"');
	expect(text).toContain("kill -s HUP t3code-mcp");
});
