/**
 * A machine's token as it is now: the `token_env` value read at start, or the `token_file`
 * read again at every connect, so a re-pair (a new file) applies without a restart. A token
 * read from a file is registered for masking as soon as it is read.
 */
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { registerSecrets } from "../util/redact.ts";
import { type Env, envValue } from "./env.ts";
import type { MachineConfig } from "./types.ts";

export type MachineToken =
	| { token: string; problem?: undefined }
	| { token?: undefined; problem: string };

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

/** The token in a file (surrounding whitespace removed), or what is wrong with the file. */
export function readTokenFile(
	path: string,
	readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): MachineToken {
	const where = `token file ${path} (token_file)`;
	let text: string;
	try {
		text = readFile(path);
	} catch (err) {
		const code = (err as { code?: unknown }).code;
		if (code === "ENOENT")
			return {
				problem: `${where} does not exist; write it with \`t3code-mcp pair <pairing-url> --token-file ${path}\``,
			};
		if (code === "EACCES" || code === "EPERM")
			return {
				problem: `${where} cannot be read by this process (permission denied); give it to the user t3code-mcp runs as, or use systemd's LoadCredential=`,
			};
		if (code === "EISDIR")
			return { problem: `${where} is a directory, not a file` };
		return {
			problem: `${where} cannot be read: ${typeof code === "string" ? code : (err as Error).message}`,
		};
	}
	const token = text.trim();
	if (token === "")
		return {
			problem: `${where} is empty; write the token alone in it (\`t3code-mcp pair\` does)`,
		};
	registerSecrets([token]);
	return { token };
}

/** The machine's token now, or why there is none (the reason `unauthorized` carries). */
export function machineToken(
	machine: MachineConfig,
	readFile?: (path: string) => string,
): MachineToken {
	if (machine.tokenFile !== null)
		return readTokenFile(machine.tokenFile, readFile);
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
