/**
 * A machine's token as it is now: the `token_env` value read at start, or the `token_file`
 * read again at every connect, so a re-pair (a new file) applies without a restart. A token
 * read from a file is registered for masking as soon as it is read. Reads are asynchronous and
 * bounded, so no file, whatever it is, can stall the process.
 */
import { constants, type FSWatcher, type Stats, watch } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { registerSecrets } from "../util/redact.ts";
import { type Env, envValue } from "./env.ts";
import type { MachineConfig } from "./types.ts";

export type MachineToken =
	/** `warning`: the token is usable, but the file is readable by group or others. */
	| { token: string; problem?: undefined; warning?: string }
	| { token?: undefined; problem: string; warning?: undefined };

/**
 * Where `token_file` points: an absolute path as is; a bare file name in
 * `$CREDENTIALS_DIRECTORY` when systemd sets it (`LoadCredential=`); else relative to the
 * config file's directory.
 */
export function resolveTokenFile(
	value: string,
	configDir: string,
	env: Env,
): string {
	if (isAbsolute(value)) return value;
	const credentials = envValue(env, "CREDENTIALS_DIRECTORY");
	if (credentials !== undefined && !/[/\\]/.test(value))
		return join(credentials, value);
	return resolve(configDir, value);
}

/** What a token file must hold, as its problems say. */
const ALONE = "write the token alone in it (`t3code-mcp pair` does)";

/** A token file holds the token alone: anything bigger is not one (and is never read whole). */
export const MAX_TOKEN_FILE_BYTES = 4096;

/** What the reader needs of the file system; tests inject failures the real one cannot give. */
export interface TokenFileIo {
	stat(path: string): Promise<Stats>;
	open(path: string, flags: number): Promise<FileHandle>;
}

const NODE_IO: TokenFileIo = { stat, open };

/**
 * O_NONBLOCK: a FIFO with no writer cannot hold up the open (and so `serve`, `check` or another
 * machine); O_NOCTTY: a terminal named by mistake does not become ours.
 */
const OPEN_FLAGS =
	constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Why a file that is not a regular one cannot hold a token, or undefined when it can. */
function notRegular(s: Stats): string | undefined {
	if (s.isFile()) return undefined;
	if (s.isDirectory()) return "is a directory";
	if (s.isFIFO()) return "is a FIFO (named pipe)";
	if (s.isCharacterDevice() || s.isBlockDevice()) return "is a device";
	if (s.isSocket()) return "is a socket";
	return "is not a regular file";
}

function openProblem(where: string, path: string, err: unknown): string {
	const code = (err as { code?: unknown }).code;
	if (code === "ENOENT")
		return `${where} does not exist; write it with \`t3code-mcp pair <pairing-url> --token-file ${path}\``;
	if (code === "EACCES" || code === "EPERM")
		return `${where} cannot be read by this process (permission denied); give it to the user t3code-mcp runs as, or use systemd's LoadCredential=`;
	if (code === "ENXIO") return `${where} is a socket, not a regular file`;
	return `${where} cannot be read: ${typeof code === "string" ? code : (err as Error).message}`;
}

/** At most `max` bytes from the start of the file (fewer at its end). */
async function readAtMost(handle: FileHandle, max: number): Promise<Buffer> {
	const buffer = Buffer.alloc(max);
	let length = 0;
	while (length < max) {
		const { bytesRead } = await handle.read(
			buffer,
			length,
			max - length,
			length,
		);
		if (bytesRead === 0) break;
		length += bytesRead;
	}
	return buffer.subarray(0, length);
}

/**
 * The token in a file (surrounding whitespace removed), or what is wrong with the file. Only a
 * regular file of at most 4 KiB is read, and never more than that: a FIFO, a device or a
 * directory is a problem naming the file, never a wait nor an endless read. A file readable by
 * group or others gives the token with a `warning`.
 */
export async function readTokenFile(
	path: string,
	io: TokenFileIo = NODE_IO,
): Promise<MachineToken> {
	const where = `token file ${path} (token_file)`;
	const special = (what: string) =>
		`${where} ${what}, not a regular file; write the token alone in a regular file (\`t3code-mcp pair\` does)`;
	let bytes: Buffer;
	let mode: number;
	try {
		// stat first: a device or FIFO is refused without even being opened.
		const before = notRegular(await io.stat(path));
		if (before !== undefined) return { problem: special(before) };
		const handle = await io.open(path, OPEN_FLAGS);
		try {
			// fstat again: the path may have been swapped between the stat and the open.
			const s = await handle.stat();
			const what = notRegular(s);
			if (what !== undefined) return { problem: special(what) };
			if (s.size > MAX_TOKEN_FILE_BYTES)
				return { problem: tooBig(where, `is ${s.size} bytes`) };
			mode = s.mode;
			bytes = await readAtMost(handle, MAX_TOKEN_FILE_BYTES + 1);
		} finally {
			await handle.close();
		}
	} catch (err) {
		return { problem: openProblem(where, path, err) };
	}
	// It grew between the fstat and the read.
	if (bytes.length > MAX_TOKEN_FILE_BYTES)
		return {
			problem: tooBig(where, `holds more than ${MAX_TOKEN_FILE_BYTES} bytes`),
		};
	const lines = bytes
		.toString("utf8")
		.split(/\r?\n/)
		.filter((l) => l.trim() !== "");
	if (lines.length === 0)
		return {
			problem: `${where} is empty; ${ALONE}`,
		};
	if (lines.length > 1)
		return {
			problem: `${where} holds ${lines.length} non-empty lines; ${ALONE}`,
		};
	const token = (lines[0] ?? "").trim();
	registerSecrets([token]);
	if ((mode & 0o044) === 0) return { token };
	return {
		token,
		warning: `${where} is readable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, "0")})`,
	};
}

function tooBig(where: string, what: string): string {
	return `${where} ${what}; a token file holds the token alone (${MAX_TOKEN_FILE_BYTES} bytes at most): point token_file at the right file, or write it again with \`t3code-mcp pair\``;
}

/** The machine's token now, or why there is none (the reason `unauthorized` carries). */
export async function machineToken(
	machine: MachineConfig,
	io?: TokenFileIo,
): Promise<MachineToken> {
	if (machine.tokenFile !== null) return readTokenFile(machine.tokenFile, io);
	if (machine.token !== undefined) return { token: machine.token };
	return {
		problem: `no token: environment variable ${machine.tokenEnv} is not set`,
	};
}

/**
 * Calls `onChange` (debounced) when the token file is written, replaced or created. Its
 * directory is watched, as `t3code-mcp pair` replaces the file by a rename. Where the directory
 * cannot be watched (missing, no inotify) nothing is called: the slow retry still finds it.
 */
export function watchTokenFile(path: string, onChange: () => void): () => void {
	const name = basename(path);
	let timer: ReturnType<typeof setTimeout> | undefined;
	let watcher: FSWatcher | undefined;
	try {
		watcher = watch(dirname(path), (_event, file) => {
			if (file !== null && file !== name) return;
			if (timer) clearTimeout(timer);
			timer = setTimeout(onChange, 50);
		});
		watcher.on("error", () => watcher?.close());
	} catch {
		watcher = undefined;
	}
	return () => {
		if (timer) clearTimeout(timer);
		watcher?.close();
	};
}
