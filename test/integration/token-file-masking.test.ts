/**
 * A token read from a `token_file` is a configured secret like a `token_env` one: against the
 * hostile simulator (which echoes the bearer it sees into every text it sends), no piece of it
 * reaches a tool result, /healthz, the log or `check`. The token is only ever in the file,
 * never in the config or the environment.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCheck } from "../../src/cli/check.ts";
import { createLogger } from "../../src/util/log.ts";
import { MASK } from "../../src/util/redact.ts";
import {
	callTool,
	type Stack,
	startStack,
	untilMachineOnline,
} from "../helpers/stack.ts";

/** No word in it, so a 5-character piece cannot occur by chance. */
const FILE_TOKEN = "Rf4Tg-Yh7Uj2Ik9Ol3Pz6Xs1Dc8Vb5Nm0";

let dir: string;
let stack: Stack;
const logs: string[] = [];
const seen: string[] = [];

function expectNoPiece(text: string): void {
	for (let i = 0; i + 5 <= FILE_TOKEN.length; i++)
		expect(text).not.toContain(FILE_TOKEN.slice(i, i + 5));
}

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-token-file-mask-"));
	writeFileSync(join(dir, "paired.token"), `${FILE_TOKEN}\n`, { mode: 0o600 });
	stack = await startStack({
		machines: [
			{
				name: "paired",
				tokenFile: join(dir, "paired.token"),
				sim: { hostile: true, token: FILE_TOKEN },
			},
		],
		log: createLogger("debug", (line) => logs.push(line)),
	});
});
afterAll(async () => {
	await stack.stop();
	rmSync(dir, { recursive: true, force: true });
});

test("no piece of a token_file's token in tool results, /healthz, the log or check", async () => {
	const client = await stack.client();
	await untilMachineOnline(client, "paired");
	const call = async (name: string, args: Record<string, unknown> = {}) => {
		const result = await callTool<Record<string, unknown>>(client, name, args);
		seen.push(result.text, JSON.stringify(result.data));
		return result;
	};
	await call("t3_machines");
	const projects = await call("t3_projects", { machine: "paired" });
	expect(JSON.stringify(projects.data)).toContain(MASK);
	const d = await call("t3_dispatch", {
		machine: "paired",
		project: "/srv/t3/demo",
		prompt: "say hello",
	});
	expect(d.isError).toBe(false);
	const threadId = (d.data as { thread_id: string }).thread_id;
	const w = await call("t3_wait", { thread_id: threadId, timeout: 30 });
	expect((w.data as { message: string }).message).toContain(MASK);
	await call("t3_thread", { thread_id: threadId });
	expectNoPiece(seen.join("\n"));
	expectNoPiece(await (await fetch(`${stack.server.url}/healthz`)).text());
	expectNoPiece(logs.join("\n"));

	writeFileSync(
		join(dir, "check.toml"),
		`[machines.paired]\nurl = "${stack.sim("paired").url}"\ntoken_file = "paired.token"\nprojects = ["*"]\n`,
	);
	for (const argv of [[], ["--json"]]) {
		let out = "";
		await runCheck(argv, {
			env: {
				T3CODE_MCP_CONFIG: join(dir, "check.toml"),
				T3CODE_MCP_STATE: join(dir, "check.sqlite"),
			},
			cwd: dir,
			write: (t) => {
				out += t;
			},
		});
		expect(out).toContain(
			`token file ${join(dir, "paired.token")} is readable`,
		);
		expectNoPiece(out);
	}
});
