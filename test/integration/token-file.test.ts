/**
 * Tokens from files, and tokens that expire (issue 17 item 7), through the official MCP client:
 * a machine whose `token_file` is missing is `unauthorized` naming the file; `pair` writing it
 * brings the machine online with no restart; `t3_machines`, `/healthz` and `/metrics` show
 * the token's expiry; an expired token says so and how to mint a new one; a re-pair applies
 * without a restart. The sim's clock runs 31 days behind, so a token it issues has already
 * "expired" by the connector's clock while the sim still accepts it, until the sim catches up.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPair } from "../../src/cli/pair.ts";
import { maskSecrets } from "../../src/util/redact.ts";
import { callTool, type Stack, startStack, until } from "../helpers/stack.ts";

const DAY = 24 * 3600 * 1000;
let offset = -31 * DAY;
let dir: string;
let file: string;
let stack: Stack;

type Row = {
	name: string;
	state: string;
	reason: string | null;
	token_expires_at: string | null;
};

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-token-file-"));
	file = join(dir, "lab.token");
	stack = await startStack({
		machines: [
			{ name: "lab", tokenFile: file, sim: { now: () => Date.now() + offset } },
		],
	});
});
afterAll(async () => {
	await stack.stop();
	rmSync(dir, { recursive: true, force: true });
});

async function lab(): Promise<Row> {
	const client = await stack.client();
	const { data } = await callTool<{ machines: Row[] }>(client, "t3_machines");
	const row = data.machines.find((m) => m.name === "lab");
	if (!row) throw new Error("no machine lab");
	return row;
}

async function untilLab(what: string, ok: (row: Row) => boolean): Promise<Row> {
	let last: Row | undefined;
	await until(
		async () => {
			last = await lab();
			return ok(last);
		},
		10_000,
		what,
	);
	return last as Row;
}

/** `t3code-mcp pair` with a fresh link from the lab's sim into the machine's token file. */
async function pair(): Promise<string> {
	let out = "";
	let err = "";
	const code = await runPair(
		[stack.sim("lab").pairingLink(), "--token-file", file],
		{
			out: (t) => {
				out += t;
			},
			err: (t) => {
				err += t;
			},
		},
	);
	expect({ code, err }).toEqual({ code: 0, err: "" });
	return out;
}

test("a missing token file: unauthorized naming the file; pair brings the machine online with no restart", async () => {
	const missing = await untilLab(
		"unauthorized",
		(r) => r.state === "unauthorized",
	);
	expect(missing.reason).toBe(
		`T3 machine "lab" (${stack.sim("lab").url}): token file ${file} (token_file) does not exist; write it with \`t3code-mcp pair <pairing-url> --token-file ${file}\``,
	);
	expect(missing.token_expires_at).toBeNull();

	// T3 says the token has 30 days left (expires_in): kept, though past by this clock.
	expect(await pair()).toContain(
		"by T3's clock, already past by this host's: check the clocks",
	);
	const online = await untilLab("online", (r) => r.state === "online");
	const expiresAt = online.token_expires_at;
	// Issued at the sim's time (31 days behind) for 30 days: a day ago by this clock.
	expect(Date.parse(expiresAt ?? "")).toBeCloseTo(Date.now() - DAY, -5);

	const health = (await (
		await fetch(`${stack.server.url}/healthz`)
	).json()) as { machines: Record<string, unknown> };
	expect(health.machines.lab).toMatchObject({
		state: "online",
		token_expires_at: expiresAt,
	});
	const metrics = await (await fetch(`${stack.server.url}/metrics`)).text();
	expect(metrics).toContain(
		`t3code_mcp_token_expiry_seconds{machine="lab"} ${Math.floor(Date.parse(expiresAt ?? "") / 1000)}`,
	);
	// The token read from the file is one of the secrets masked everywhere.
	const token = readFileSync(file, "utf8");
	expect(maskSecrets(`x ${token} y`)).toBe("x [redacted] y");
});

test("an expired token says when and how to mint a new one; a re-pair applies without a restart", async () => {
	const before = await lab();
	expect(before.state).toBe("online");
	// The sim's clock catches up: the token it issued is past its expiry there too.
	offset = 0;
	stack.sim("lab").dropSockets();
	const expired = await untilLab("expired", (r) => r.state === "unauthorized");
	expect(expired.reason).toBe(
		`T3 machine "lab" (${stack.sim("lab").url}): token expired at ${before.token_expires_at}; mint a new one (\`t3code-mcp pair\`, or \`t3 auth session issue\`)`,
	);
	expect(expired.token_expires_at).toBe(before.token_expires_at);

	await pair();
	const repaired = await untilLab("online again", (r) => r.state === "online");
	expect(Date.parse(repaired.token_expires_at ?? "")).toBeCloseTo(
		Date.now() + 30 * DAY,
		-5,
	);
});

test("after a restart, a token found dead is still reported expired (the expiry is kept in the state file)", async () => {
	// A token the sim accepts now but whose expiry, by this clock, has passed.
	offset = -31 * DAY;
	await pair();
	stack.sim("lab").dropSockets();
	const online = await untilLab(
		"online with the older token",
		(r) =>
			r.state === "online" && Date.parse(r.token_expires_at ?? "") < Date.now(),
	);
	await stack.stopServer();
	offset = 0;
	await stack.restartServer();
	const expired = await untilLab("expired", (r) => r.state === "unauthorized");
	expect(expired.reason).toBe(
		`T3 machine "lab" (${stack.sim("lab").url}): token expired at ${online.token_expires_at}; mint a new one (\`t3code-mcp pair\`, or \`t3 auth session issue\`)`,
	);
	// Only a fingerprint of the token is stored, never the token.
	const token = Buffer.from(readFileSync(file, "utf8"));
	for (const path of [stack.statePath, `${stack.statePath}-wal`])
		if (existsSync(path))
			expect(readFileSync(path).includes(token)).toBe(false);
});
