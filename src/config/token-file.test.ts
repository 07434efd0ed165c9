/**
 * The token file reader (CONTRACT.md "Faithful edges"): only a regular file of at most 4 KiB is
 * read, and only that much; anything else is a problem naming the file, at once, never a wait.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	chmodSync,
	mkdirSync,
	mkdtempSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { open, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { maskSecrets } from "../util/redact.ts";
import {
	MAX_TOKEN_FILE_BYTES,
	machineToken,
	readTokenFile,
} from "./token-file.ts";
import type { MachineConfig } from "./types.ts";

const MKFIFO = Bun.which("mkfifo");
let dir: string;
let fifo: string;

const where = (path: string) => `token file ${path} (token_file)`;

/** A file with `text`, mode 0600 unless told. */
function tokenFile(name: string, text: string, mode = 0o600): string {
	const path = join(dir, name);
	writeFileSync(path, text);
	chmodSync(path, mode);
	return path;
}

beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-token-file-unit-"));
	fifo = join(dir, "fifo.token");
	if (MKFIFO) {
		const made = Bun.spawnSync([MKFIFO, fifo]);
		if (made.exitCode !== 0) throw new Error(`mkfifo: ${made.stderr}`);
	}
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("readTokenFile", () => {
	test("a 0600 file: the token alone, trimmed, masked from then on, no warning", async () => {
		const path = tokenFile("ok.token", "\n  tok-unit-0600-abcdef \r\n\n");
		expect(await readTokenFile(path)).toEqual({
			token: "tok-unit-0600-abcdef",
		});
		expect(maskSecrets("x tok-unit-0600-abcdef y")).toBe("x [redacted] y");
	});

	test("readable by group or others: the token, with a warning naming the file and its mode", async () => {
		for (const mode of [0o644, 0o640, 0o604]) {
			const path = tokenFile(
				`loose-${mode.toString(8)}.token`,
				"tok-loose",
				mode,
			);
			expect(await readTokenFile(path)).toEqual({
				token: "tok-loose",
				warning: `${where(path)} is readable by group or others (mode 0${mode.toString(8)})`,
			});
		}
	});

	test.skipIf(!MKFIFO)(
		"a FIFO with no writer is refused at once, naming the file",
		async () => {
			expect(await readTokenFile(fifo)).toEqual({
				problem: `${where(fifo)} is a FIFO (named pipe), not a regular file; write the token alone in a regular file (\`t3code-mcp pair\` does)`,
			});
		},
	);

	test.skipIf(!MKFIFO)(
		"a path that becomes a FIFO after the stat is refused by the fstat, and its open does not wait for a writer",
		async () => {
			const regular = tokenFile("swapped.token", "tok-swapped");
			const problem = (
				await readTokenFile(regular, {
					stat: () => stat(regular),
					open: (_path, flags) => open(fifo, flags),
				})
			).problem;
			expect(problem).toBe(
				`${where(regular)} is a FIFO (named pipe), not a regular file; write the token alone in a regular file (\`t3code-mcp pair\` does)`,
			);
		},
	);

	test("a device is refused without reading it", async () => {
		expect((await readTokenFile("/dev/zero")).problem).toBe(
			`${where("/dev/zero")} is a device, not a regular file; write the token alone in a regular file (\`t3code-mcp pair\` does)`,
		);
	});

	test("a directory is refused, naming it", async () => {
		const sub = join(dir, "a-directory");
		mkdirSync(sub);
		expect((await readTokenFile(sub)).problem).toBe(
			`${where(sub)} is a directory, not a regular file; write the token alone in a regular file (\`t3code-mcp pair\` does)`,
		);
	});

	test("a file over 4 KiB is refused with its size; 4 KiB exactly is read", async () => {
		const big = tokenFile("big.token", "x".repeat(5 * 1024));
		expect((await readTokenFile(big)).problem).toBe(
			`${where(big)} is 5120 bytes; a token file holds the token alone (4096 bytes at most): point token_file at the right file, or write it again with \`t3code-mcp pair\``,
		);
		const edge = tokenFile("edge.token", "y".repeat(MAX_TOKEN_FILE_BYTES));
		expect((await readTokenFile(edge)).token).toBe(
			"y".repeat(MAX_TOKEN_FILE_BYTES),
		);
	});

	test("a file that grows after the fstat is still read no further than 4 KiB + 1", async () => {
		const small = tokenFile("grows.token", "tok-small");
		let asked = 0;
		const problem = (
			await readTokenFile(small, {
				stat,
				async open(path, flags) {
					const handle = await open(path, flags);
					// What an endless file (a device swapped in) would give: as much as asked for.
					return Object.assign(handle, {
						read: async (buffer: Buffer, offset: number, length: number) => {
							asked += length;
							buffer.fill(0x7a, offset, offset + length);
							return { bytesRead: length, buffer };
						},
					});
				},
			})
		).problem;
		expect(asked).toBe(MAX_TOKEN_FILE_BYTES + 1);
		expect(problem).toBe(
			`${where(small)} holds more than 4096 bytes; a token file holds the token alone (4096 bytes at most): point token_file at the right file, or write it again with \`t3code-mcp pair\``,
		);
	});

	test("more than one non-empty line says how many, not that the token is refused", async () => {
		const path = tokenFile("two.token", "tok-one\n\ntok-two\r\n");
		expect((await readTokenFile(path)).problem).toBe(
			`${where(path)} holds 2 non-empty lines; write the token alone in it (\`t3code-mcp pair\` does)`,
		);
	});

	test("empty, or only blank lines: empty", async () => {
		const path = tokenFile("blank.token", " \n\t\n");
		expect((await readTokenFile(path)).problem).toBe(
			`${where(path)} is empty; write the token alone in it (\`t3code-mcp pair\` does)`,
		);
	});

	test("missing, or denied (as root cannot be, so injected): the file is named with what to do", async () => {
		const missing = join(dir, "missing.token");
		expect((await readTokenFile(missing)).problem).toBe(
			`${where(missing)} does not exist; write it with \`t3code-mcp pair <pairing-url> --token-file ${missing}\``,
		);
		const denied = Object.assign(new Error("EACCES: permission denied"), {
			code: "EACCES",
		});
		const refused = await readTokenFile("/srv/mac.token", {
			stat: () => Promise.reject(denied),
			open: () => Promise.reject(denied),
		});
		expect(refused.problem).toBe(
			"token file /srv/mac.token (token_file) cannot be read by this process (permission denied); give it to the user t3code-mcp runs as, or use systemd's LoadCredential=",
		);
	});
});

describe("machineToken", () => {
	const machine = (over: Partial<MachineConfig>): MachineConfig => ({
		name: "mac",
		url: "http://127.0.0.1:1",
		tokenEnv: "T3_MAC_TOKEN",
		tokenFile: null,
		token: undefined,
		projects: ["*"],
		model: null,
		options: [],
		...over,
	});

	test("a token file is read now; token_env gives its value or names the variable", async () => {
		const path = tokenFile("machine.token", "tok-machine-1");
		const fromFile = machine({ tokenEnv: null, tokenFile: path });
		expect((await machineToken(fromFile)).token).toBe("tok-machine-1");
		writeFileSync(path, "tok-machine-2\n");
		expect((await machineToken(fromFile)).token).toBe("tok-machine-2");
		expect(await machineToken(machine({ token: "tok-env" }))).toEqual({
			token: "tok-env",
		});
		expect((await machineToken(machine({}))).problem).toBe(
			"no token: environment variable T3_MAC_TOKEN is not set",
		);
	});
});
