/**
 * systemd credentials as a token source: with `LoadCredential=T3_MAC_TOKEN:/etc/…`, systemd
 * puts the file at `$CREDENTIALS_DIRECTORY/T3_MAC_TOKEN`, readable only by the service. When a
 * machine's `token_env` variable is unset, its token is read from the credential of that name.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Env, envValue } from "./env.ts";

const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The token from `$CREDENTIALS_DIRECTORY/<tokenEnv>` (trailing whitespace and newline removed),
 * or undefined when there is no credentials directory, no such file, or it is empty.
 *
 * @example token: envValue(env, m.token_env) ?? credentialToken(env, m.token_env)
 */
export function credentialToken(
	env: Env,
	tokenEnv: string,
	readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): string | undefined {
	const dir = envValue(env, "CREDENTIALS_DIRECTORY");
	if (dir === undefined || !SAFE_NAME.test(tokenEnv)) return undefined;
	let text: string;
	try {
		text = readFile(join(dir, tokenEnv));
	} catch {
		return undefined;
	}
	const token = text.trim();
	return token === "" ? undefined : token;
}
