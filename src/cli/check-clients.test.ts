import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fullRights } from "../config/clients.ts";
import type { AppConfig, ClientConfig } from "../config/types.ts";
import type { ProjectShell } from "../t3/model.ts";
import { clientChecks, type OnlineMachines } from "./check-clients.ts";

const machine = (name: string) => ({ name }) as AppConfig["machines"][number];
const config = (clients: ClientConfig[]): AppConfig =>
	({
		file: "/x/t3code.toml",
		machines: [machine("mac"), machine("linux-1")],
		clients,
		server: {},
	}) as unknown as AppConfig;
const project = (title: string, workspaceRoot: string) =>
	({ id: title, title, workspaceRoot }) as ProjectShell;
const online = (entries: [string, ProjectShell[]][]): OnlineMachines =>
	new Map(entries);

let dir: string;
beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-check-clients-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("check lists each client", () => {
	it("level, approver right, the machines it reaches now, its projects and its token source", async () => {
		const [line] = await clientChecks(
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

	it("with the machines online: the projects its patterns match on them", async () => {
		const [line] = await clientChecks(
			config([
				{
					...fullRights("agent", "agent-token-0123456"),
					tokenEnv: "AGENT_TOKEN",
					projects: ["web", "/srv/api"],
				},
			]),
			online([
				["mac", [project("web", "/srv/web"), project("docs", "/srv/docs")]],
				["linux-1", [project("api", "/srv/api")]],
			]),
		);
		expect(line?.warning).toBeUndefined();
		expect(line?.detail).toContain(
			'projects web, /srv/api (matching now: mac "web", linux-1 "api")',
		);
	});

	it("a ⚠ for a client that reaches no machine, and for one without a token", async () => {
		const [nowhere, tokenless] = await clientChecks(
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

	it("a ⚠ for a client whose projects match nothing on the machines online, and for one whose machines are all offline", async () => {
		const [narrow, offline] = await clientChecks(
			config([
				{
					...fullRights("narrow", "narrow-token-0123456"),
					projects: ["mobile*"],
				},
				{
					...fullRights("away", "away-token-01234567"),
					machines: ["linux-*"],
				},
			]),
			online([["mac", [project("web", "/srv/web")]]]),
		);
		expect(narrow).toMatchObject({ name: "client narrow", warning: true });
		expect(narrow?.detail).toContain("projects mobile* (matching nothing now)");
		expect(narrow?.fix).toContain(
			"its projects patterns (mobile*) match no project its machines online now (mac) allow",
		);
		expect(offline).toMatchObject({ name: "client away", warning: true });
		expect(offline?.fix).toContain(
			"none of its machines (linux-1) is online now",
		);
	});

	it("a project outside every machine's own allowlist is not reached (online lists only allowed projects)", async () => {
		const [line] = await clientChecks(
			config([
				{ ...fullRights("agent", "agent-token-0123456"), projects: ["web"] },
			]),
			online([
				["mac", []],
				["linux-1", []],
			]),
		);
		expect(line?.warning).toBe(true);
	});

	it("a ⚠ for a token file group or others may read, as for a machine's", async () => {
		const loose = join(dir, "loose.token");
		const tight = join(dir, "tight.token");
		writeFileSync(loose, "loose-token-0123456789\n");
		chmodSync(loose, 0o644);
		writeFileSync(tight, "tight-token-0123456789\n");
		chmodSync(tight, 0o600);
		const checks = await clientChecks(
			config([
				{
					...fullRights("loose", "loose-token-0123456789"),
					tokenFile: loose,
				},
				{
					...fullRights("tight", "tight-token-0123456789"),
					tokenFile: tight,
				},
			]),
		);
		expect(checks.map((c) => c.name)).toEqual([
			"client loose",
			"client loose token file permissions",
			"client tight",
		]);
		expect(checks[1]).toEqual({
			name: "client loose token file permissions",
			ok: true,
			warning: true,
			detail: `token file ${loose} (token_file) is readable by group or others (mode 0644)`,
			fix: `\`chmod 600 ${loose}\`: only the user t3code-mcp runs as needs to read it`,
		});
		expect(JSON.stringify(checks)).not.toContain("0123456789");
	});
});
