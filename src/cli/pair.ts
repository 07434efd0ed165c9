/**
 * `t3code-mcp pair <pairing-url> [--machine NAME] [--token-file PATH] [--url URL]`: turn a T3
 * pairing link into a token file and the config lines that use it, with no config needed.
 * Order matters: protocol 2 is checked and the token file's place made ready before the
 * single-use credential is sent, and the token is verified (and refused when T3 says it has
 * already expired) before it is written. Neither the link nor the token is ever printed; every
 * refusal says what to do next. No answer is read past 64 KiB, and a token that expires within 7
 * days is saved with a ⚠.
 */
import {
	accessSync,
	constants,
	existsSync,
	mkdirSync,
	renameSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { defaultStatePath, type Env, envValue } from "../config/env.ts";
import { parseHttpOrigin } from "../config/values.ts";
import { createT3Http, type FetchLike } from "../t3/connect/http.ts";
import { exchangePairingCredential } from "../t3/connect/token-exchange.ts";
import { sessionExpiry } from "../t3/connect/token-expiry.ts";
import { cappedFetch } from "../util/capped-fetch.ts";
import { maskSecrets, registerSecrets } from "../util/redact.ts";
import { type ArgSpec, flagValue, parseArgs, UsageError } from "./args.ts";
import {
	EXPIRY_WARNING_MS,
	OPERATE_SCOPE,
	READ_SCOPE,
	TOKEN_COMMAND,
} from "./check-machine.ts";
import { EXIT, HELP } from "./help.ts";
import { machineNameFrom, parsePairingLink } from "./pairing-link.ts";

export const PAIR_USAGE =
	"usage: t3code-mcp pair <pairing-url> [--machine NAME] [--token-file PATH] [--url URL]";

/** The command that mints a link t3code-mcp can use. */
export const MINT_LINK_COMMAND =
	"t3 auth pairing create --scope orchestration:read --scope orchestration:operate --label t3code-mcp";
const MINT_NEW_LINK = `mint a new link on the T3 machine (\`${MINT_LINK_COMMAND}\`, or the app's "pair a device") and run pair again`;

const MACHINE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** No answer pair reads is bigger: a descriptor, a token, a session are a few hundred bytes. */
export const MAX_ANSWER_BYTES = 64 * 1024;
const SCOPES = [READ_SCOPE, OPERATE_SCOPE];

export interface PairDeps {
	env?: Env;
	cwd?: string;
	fetch?: FetchLike;
	out?: (text: string) => void;
	err?: (text: string) => void;
	timeoutMs?: number;
}

interface PairArgs {
	link: string;
	machine?: string;
	tokenFile?: string;
	url?: string;
}

export const PAIR_ARGS: ArgSpec = {
	usage: PAIR_USAGE.replace(/^usage: /, ""),
	flags: {
		"--machine": { value: true },
		"--token-file": { value: true },
		"--url": { value: true },
	},
	positionals: { names: ["<pairing-url>"], min: 1 },
};

/** The shared grammar (args.ts); its messages never repeat a positional (the secret link). */
export function parsePairArgs(
	argv: readonly string[],
): PairArgs | { help: true } | string {
	let parsed: ReturnType<typeof parseArgs>;
	try {
		parsed = parseArgs(argv, PAIR_ARGS);
	} catch (error) {
		if (!(error instanceof UsageError)) throw error;
		let message = error.message;
		for (const arg of argv)
			if (!arg.startsWith("-") && arg.length > 0)
				message = message.replaceAll(arg, "…");
		return message;
	}
	if (parsed.help) return { help: true };
	const [link] = parsed.positionals;
	if (link === undefined) return "missing <pairing-url>";
	const args: PairArgs = { link };
	const machine = flagValue(parsed, "--machine");
	const tokenFile = flagValue(parsed, "--token-file");
	const url = flagValue(parsed, "--url");
	if (machine !== undefined) args.machine = machine;
	if (tokenFile !== undefined) args.tokenFile = tokenFile;
	if (url !== undefined) args.url = url;
	return args;
}

/** `<state dir>/tokens/<machine>.token`; the state dir is where the state file lives. */
export function defaultTokenFile(
	env: Env,
	cwd: string,
	machine: string,
): string {
	const state =
		envValue(env, "T3CODE_MCP_STATE") ??
		defaultStatePath(env, (p) => resolve(cwd, p));
	return join(dirname(resolve(cwd, state)), "tokens", `${machine}.token`);
}

class Refusal extends Error {}

/** "in about 3 days", "in about 1 day", "in less than a day" (pairing took a moment). */
function inDays(ms: number): string {
	const days = Math.round(ms / (24 * 3600 * 1000));
	return ms >= 24 * 3600 * 1000
		? `in about ${days} day${days === 1 ? "" : "s"}`
		: "in less than a day";
}

export async function runPair(
	argv: readonly string[],
	deps: PairDeps = {},
): Promise<number> {
	const env = deps.env ?? process.env;
	const cwd = deps.cwd ?? process.cwd();
	const out = deps.out ?? ((t: string) => process.stdout.write(t));
	const err = deps.err ?? ((t: string) => process.stderr.write(t));
	const usage = (message: string) => {
		err(`t3code-mcp pair: ${message}\n${PAIR_USAGE}\n`);
		return EXIT.usage;
	};

	const args = parsePairArgs(argv);
	if (typeof args === "string") return usage(args);
	if ("help" in args) {
		out(`${PAIR_USAGE}\n\n${HELP}`);
		return EXIT.ok;
	}
	const link = parsePairingLink(args.link);
	if (typeof link === "string") return usage(link);
	// From here on no output can show the credential, whatever quotes it.
	registerSecrets([link.credential, args.link]);
	let base = link.base;
	if (args.url !== undefined) {
		const origin = parseHttpOrigin(args.url);
		if (origin === undefined)
			return usage(
				'--url must be an http(s) origin like "http://100.64.0.5:3773" (no path, no user:password@)',
			);
		base = `${origin}${link.basePath}`;
	}
	if (args.machine !== undefined && !MACHINE_NAME.test(args.machine))
		return usage(
			'--machine must be letters, digits, "_" and "-", starting with a letter or digit',
		);

	const secrets = [link.credential];
	const safe = (text: string) => {
		let masked = text;
		for (const s of secrets)
			if (s.length >= 4) masked = masked.replaceAll(s, "[redacted]");
		return maskSecrets(masked);
	};
	try {
		const lines = await pair(link.credential, base, link.basePath, args, {
			env,
			cwd,
			fetch: deps.fetch,
			timeoutMs: deps.timeoutMs,
			secrets,
		});
		out(safe(lines));
		return EXIT.ok;
	} catch (error) {
		if (!(error instanceof Refusal)) throw error;
		err(safe(`pair: ${error.message}\n`));
		return EXIT.failure;
	}
}

async function pair(
	credential: string,
	base: string,
	basePath: string,
	args: PairArgs,
	ctx: {
		env: Env;
		cwd: string;
		fetch: FetchLike | undefined;
		timeoutMs: number | undefined;
		secrets: string[];
	},
): Promise<string> {
	const timeoutMs = ctx.timeoutMs ?? 15_000;
	// Every answer read to 64 KiB at most: a huge one is cut, never buffered whole.
	const fetch = cappedFetch(
		ctx.fetch ?? ((url, init) => globalThis.fetch(url, init)),
		MAX_ANSWER_BYTES,
	);
	const http = (token?: string) =>
		createT3Http({ url: base, token, timeoutMs, fetch });
	const unused = "The link was not used: it still works.";

	// 1. Protocol 2, before anything secret is sent.
	let descriptor: Awaited<ReturnType<ReturnType<typeof http>["descriptor"]>>;
	try {
		descriptor = await http().descriptor();
	} catch (error) {
		throw new Refusal(
			`cannot read ${base}/.well-known/t3/environment: ${(error as Error).message}. Check that T3 Code runs there and this host can reach it, or give --url with an address that reaches it. ${unused}`,
		);
	}
	const version = descriptor.orchestrationProtocolVersion;
	const server = `T3 Code ${descriptor.serverVersion ?? "(unknown version)"} at ${base}`;
	if (version !== 2) {
		throw new Refusal(
			version !== undefined && version > 2
				? `${server} speaks orchestration protocol ${version}, newer than this t3code-mcp understands (2): update t3code-mcp. ${unused}`
				: `${server} speaks orchestration protocol ${version ?? 1}; t3code-mcp needs protocol 2: update T3 Code on that machine to 0.1.0 or later. ${unused}`,
		);
	}
	if (basePath !== "")
		throw new Refusal(
			`the server is under the path ${basePath}, and t3code-mcp reaches T3 at an origin only: give --url with an origin that serves T3 at its root. ${unused}`,
		);

	// 2. Where the token goes, made ready now: a failure after the exchange would lose the token.
	const machine =
		args.machine ?? machineNameFrom(descriptor.label, new URL(base).hostname);
	const file =
		args.tokenFile !== undefined
			? resolve(ctx.cwd, args.tokenFile)
			: defaultTokenFile(ctx.env, ctx.cwd, machine);
	try {
		mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
		accessSync(dirname(file), constants.W_OK);
		if (existsSync(file) && !statSync(file).isFile())
			throw new Error("it is not a regular file");
	} catch (error) {
		throw new Refusal(
			`cannot write the token file ${file}: ${(error as Error).message}. Give --token-file with a path you can write. ${unused}`,
		);
	}

	// 3. The exchange: sent once, never retried.
	const exchange = await exchangePairingCredential({
		base,
		credential,
		scopes: SCOPES,
		clientLabel: "t3code-mcp",
		timeoutMs,
		fetch,
	});
	if (!exchange.ok) {
		const why = {
			refused: `T3 refused the link (${exchange.detail}): it has expired or was already used (a link works once)`,
			scope: `the link does not grant both ${READ_SCOPE} and ${OPERATE_SCOPE} (${exchange.detail}); mint one with both scopes`,
			invalid: `T3 refused the exchange (${exchange.detail})`,
			uncertain: `no clear answer from T3 (${exchange.detail}): the link may have been used, and it works once, so pair does not send it again`,
		}[exchange.kind];
		throw new Refusal(`${why}. Next: ${MINT_NEW_LINK}.`);
	}
	ctx.secrets.push(exchange.token);
	registerSecrets([exchange.token]);
	if (exchange.tokenType.toLowerCase() !== "bearer")
		throw new Refusal(
			`T3 issued a ${exchange.tokenType || "non-bearer"} token, bound to a key t3code-mcp does not hold (it sends plain bearer tokens); it was not saved. Next: on the T3 machine issue a bearer token with \`${TOKEN_COMMAND}\` and give it to t3code-mcp through token_env or token_file.`,
		);
	const granted = exchange.scopes;
	if (
		granted !== null &&
		(granted.length !== SCOPES.length ||
			SCOPES.some((s) => !granted.includes(s)))
	)
		throw new Refusal(
			`T3 granted ${granted.join(", ") || "no scopes"} instead of exactly ${READ_SCOPE} and ${OPERATE_SCOPE}; the token was not saved. Next: ${MINT_NEW_LINK}.`,
		);

	// T3's own word, by its own clock: ours may be off (a token T3 still accepts is kept).
	if (exchange.expiresIn !== null && exchange.expiresIn <= 0)
		throw new Refusal(
			`T3 issued a token that had already expired (expires_in ${exchange.expiresIn} s); it was not saved. Next: ${MINT_NEW_LINK}; if it happens again, check the clock and the session lifetime on the T3 machine.`,
		);

	// 4. Verify before writing.
	let session: Awaited<ReturnType<ReturnType<typeof http>["authSession"]>>;
	try {
		session = await http(exchange.token).authSession();
	} catch (error) {
		throw new Refusal(
			`the new token could not be verified (${(error as Error).message}); it was not saved. Next: ${MINT_NEW_LINK}.`,
		);
	}
	const scopes = session.scopes ?? [];
	if (!session.authenticated || SCOPES.some((s) => !scopes.includes(s)))
		throw new Refusal(
			`${base}/api/auth/session does not accept the new token with ${READ_SCOPE} and ${OPERATE_SCOPE}; it was not saved. Next: ${MINT_NEW_LINK}.`,
		);
	const expiresAt =
		sessionExpiry(session) ??
		(exchange.expiresIn !== null
			? new Date(Date.now() + exchange.expiresIn * 1000).toISOString()
			: null);
	const pastHere = expiresAt !== null && Date.parse(expiresAt) <= Date.now();
	// With no expires_in, this host's clock is the only one to tell by.
	if (pastHere && exchange.expiresIn === null)
		throw new Refusal(
			`T3 says the new token expires at ${expiresAt}, already past by this host's clock; it was not saved. Next: check the clocks of this host and the T3 machine, then ${MINT_NEW_LINK}.`,
		);

	// 5. The token alone, 0600, replacing any earlier one in one step.
	const temp = `${file}.${process.pid}.tmp`;
	try {
		writeFileSync(temp, exchange.token, { mode: 0o600, flag: "wx" });
		renameSync(temp, file);
	} catch (error) {
		rmSync(temp, { force: true });
		throw new Refusal(
			`cannot write the token file ${file}: ${(error as Error).message}; the token was not saved. Next: fix that, then ${MINT_NEW_LINK}.`,
		);
	}

	const expiry =
		expiresAt === null
			? "T3 does not say when it expires"
			: pastHere
				? `it expires at ${expiresAt} by T3's clock, already past by this host's: check the clocks (T3 says it has ${exchange.expiresIn} s left)`
				: `it expires at ${expiresAt}: pair again before then (\`t3code-mcp check\` warns 7 days ahead)`;
	const left = expiresAt === null ? null : Date.parse(expiresAt) - Date.now();
	const soon =
		left !== null && left > 0 && left <= EXPIRY_WARNING_MS
			? `⚠ the token expires ${inDays(left)}, within 7 days: it stops working then, with no refresh. Pair again before then, or on the T3 machine issue a longer-lived token with \`${TOKEN_COMMAND}\` and give it to t3code-mcp through token_env or token_file\n`
			: "";
	return `✓ ${server} speaks orchestration protocol 2
✓ paired: a bearer token with ${READ_SCOPE} and ${OPERATE_SCOPE}, verified; ${expiry}
${soon}✓ token written to ${file} (mode 0600)

Add to t3code.toml (when [machines.${machine}] is already there with this token_file, nothing
to change: the new token is used at the next connect, no restart needed):

[machines.${machine}]
url = "${new URL(base).origin}"
token_file = "${file}"
projects = ["*"]
`;
}
