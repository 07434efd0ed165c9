/**
 * The zod schema of `t3code.toml` (CONTRACT.md "Config") and the translation of zod issues into
 * ConfigProblems. Every schema's `error` text is the "expected …" phrase the user reads, so the
 * wording lives beside the rule it explains. Environment variables are not handled here.
 */
import { z } from "zod";
import { DECISIONS } from "../t3/derive/request-kinds.ts";
import {
	type ConfigProblem,
	expectedProblem,
	keyPath,
} from "./config-error.ts";
import { patternProblem } from "./fnmatch.ts";
import { ACCESS_LEVELS } from "./types.ts";
import {
	hasUserinfo,
	parseHostName,
	parseHttpOrigin,
	parseHttpUrl,
} from "./values.ts";

export const EXPECT = {
	host: 'an address to listen on like "127.0.0.1" or "0.0.0.0"',
	port: "an integer 0-65535",
	state: "a file path for the sqlite state",
	allowedHosts: 'an array of host names like ["t3code-mcp"]',
	allowedHost: 'a host name without port, like "t3code-mcp"',
	allowedOrigins: 'an array of origins like ["https://claude.ai"]',
	allowedOrigin: 'an http(s) origin like "https://claude.ai"',
	hookUrl: 'an http(s) URL like "https://gateway.example/hooks/t3"',
	waitTimeout: "an integer 1-3600 (seconds)",
	pingTimeout: "an integer 1-300 (seconds)",
	logLevel: 'one of "debug", "info", "warn", "error"',
	server: "a table of server settings",
	machines: "a table of [machines.<name>] tables",
	machineName:
		'a machine name of letters, digits, "_" and "-", starting with a letter or digit',
	machine: "a table with url, token_env or token_file, and projects",
	url: 'an http(s) origin like "http://100.64.0.5:3773"',
	urlOnlyOrigin:
		'an http(s) origin without path, query or fragment, like "http://100.64.0.5:3773"',
	tokenEnv: 'an environment variable name like "T3_MAC_TOKEN"',
	tokenFile:
		'a path to a file holding the token alone, like "mac.token" (see `t3code-mcp pair`)',
	tokenSource:
		"exactly one of token_env (the environment variable holding the token) or token_file (a file holding it, e.g. written by `t3code-mcp pair`)",
	projects: 'a non-empty array of fnmatch patterns like ["*"]',
	project: "a non-empty fnmatch pattern",
	pattern: "an fnmatch pattern",
	model: '"<providerInstance>/<model>" like "claudeAgent/claude-opus-5"',
	options: 'a table of option values like { effort = "high" }',
	optionId: "a non-empty option id",
	optionValue: "a string or boolean",
	hookUrlUserinfo:
		"a URL without user:password@ (send a credential with the T3CODE_MCP_HOOK_TOKEN environment variable)",
	urlUserinfo:
		"an origin without user:password@ (the token goes in the environment variable named by token_env)",
	auditDays: "an integer 1-3650 (days)",
	consoleSessionHours: "an integer 1-8760 (hours)",
	clients: "a table of [clients.<name>] tables",
	clientName:
		'a client name of lowercase letters, digits, "_" and "-", starting with a letter or digit, at most 64 characters',
	client:
		"a table with token_env or token_file, access, machines, projects, approve, max_active_runs and max_held",
	access:
		'one of "read-only", "approval-required", "auto-accept-edits", "auto", "full-access"',
	clientMachines:
		'a non-empty array of fnmatch patterns on machine names like ["*"]',
	clientMachine: "a non-empty fnmatch pattern on machine names",
	approve: "true or false",
	maxActiveRuns: "an integer 1-10000",
	maxHeld: "an integer 0-100000 (held dispatches; 0 = never hold)",
	publicUrl:
		'an http(s) origin without path, query or user:password@, like "https://t3mcp.example.ts.net"',
	approvals:
		"a table with link_client, hook_url, hook_token_env, link_ttl_s and decisions",
	linkClient: "the name of a [clients.<name>] table with approve = true",
	peopleHookUrl:
		'an http(s) URL like "https://gateway.example/hooks/t3code-people"',
	peopleHookUrlUserinfo:
		"a URL without user:password@ (send a credential through the variable named by hook_token_env)",
	linkTtl: "an integer 60-604800 (seconds)",
	decisions:
		'a non-empty array of decisions like ["accept", "decline"] (accept, accept_for_session, accept_always, decline, cancel)',
} as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MACHINE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const INSTANCE_ID = /^[A-Za-z][A-Za-z0-9_-]*$/;
const CLIENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Keys that hold secrets: refused in the file, with the env variable to use instead. */
const SECRET_SERVER_KEYS: Record<string, string> = {
	token: "T3CODE_MCP_TOKEN",
	hook_token: "T3CODE_MCP_HOOK_TOKEN",
	hook_secret: "T3CODE_MCP_HOOK_SECRET",
};

const int = (min: number, max: number, error: string) =>
	z.number({ error }).int({ error }).min(min, { error }).max(max, { error });

const serverSchema = z.strictObject(
	{
		host: z
			.string({ error: EXPECT.host })
			.transform(
				(s, ctx) => parseHostName(s, true) ?? fail(ctx, s, EXPECT.host),
			),
		port: int(0, 65535, EXPECT.port),
		state: z.string({ error: EXPECT.state }).min(1, { error: EXPECT.state }),
		allowed_hosts: z.array(
			z
				.string({ error: EXPECT.allowedHost })
				.transform(
					(s, ctx) =>
						parseHostName(s, false) ?? fail(ctx, s, EXPECT.allowedHost),
				),
			{ error: EXPECT.allowedHosts },
		),
		allowed_origins: z.array(
			z
				.string({ error: EXPECT.allowedOrigin })
				.transform(
					(s, ctx) => parseHttpOrigin(s) ?? fail(ctx, s, EXPECT.allowedOrigin),
				),
			{ error: EXPECT.allowedOrigins },
		),
		hook_url: z.string({ error: EXPECT.hookUrl }).transform((s, ctx) => {
			if (hasUserinfo(s)) return refuseUserinfo(ctx, EXPECT.hookUrlUserinfo);
			return parseHttpUrl(s) ?? fail(ctx, s, EXPECT.hookUrl);
		}),
		wait_timeout_s: int(1, 3600, EXPECT.waitTimeout),
		ping_timeout_s: int(1, 300, EXPECT.pingTimeout),
		log_level: z.enum(["debug", "info", "warn", "error"], {
			error: EXPECT.logLevel,
		}),
		audit_days: int(1, 3650, EXPECT.auditDays),
		max_held: int(0, 100_000, EXPECT.maxHeld),
		console_session_hours: int(1, 8760, EXPECT.consoleSessionHours),
		public_url: z.string({ error: EXPECT.publicUrl }).transform((s, ctx) => {
			if (hasUserinfo(s)) return refuseUserinfo(ctx, EXPECT.publicUrl);
			return parseHttpOrigin(s) ?? fail(ctx, s, EXPECT.publicUrl);
		}),
	},
	{ error: EXPECT.server },
);

/** `[approvals]` (CONTRACT.md "Approval links"); whether link_client exists is checked later. */
const approvalsSchema = z.strictObject(
	{
		link_client: z
			.string({ error: EXPECT.linkClient })
			.regex(CLIENT_NAME, { error: EXPECT.linkClient }),
		hook_url: z.string({ error: EXPECT.peopleHookUrl }).transform((s, ctx) => {
			if (hasUserinfo(s))
				return refuseUserinfo(ctx, EXPECT.peopleHookUrlUserinfo);
			return parseHttpUrl(s) ?? fail(ctx, s, EXPECT.peopleHookUrl);
		}),
		hook_token_env: z
			.string({ error: EXPECT.tokenEnv })
			.regex(ENV_NAME, { error: EXPECT.tokenEnv })
			.optional(),
		link_ttl_s: int(60, 604_800, EXPECT.linkTtl).optional(),
		decisions: z
			.array(
				z.enum(DECISIONS as [string, ...string[]], { error: EXPECT.decisions }),
				{
					error: EXPECT.decisions,
				},
			)
			.min(1, { error: EXPECT.decisions })
			.optional(),
	},
	{ error: EXPECT.approvals },
);

/** A non-empty array of fnmatch patterns, each checked by the project's own matcher. */
const patterns = (one: string, all: string) =>
	z
		.array(
			z
				.string({ error: one })
				.min(1, { error: one })
				.superRefine((s, ctx) => {
					const problem = patternProblem(s);
					if (problem !== undefined) {
						ctx.addIssue({
							code: "custom",
							message: EXPECT.pattern,
							params: { detail: problem },
						});
					}
				}),
			{ error: all },
		)
		.min(1, { error: all });

/** `token_env` or `token_file`, the same rules for a machine and a client. */
const tokenSourceKeys = {
	token_env: z
		.string({ error: EXPECT.tokenEnv })
		.regex(ENV_NAME, { error: EXPECT.tokenEnv })
		.optional(),
	token_file: z
		.string({ error: EXPECT.tokenFile })
		.min(1, { error: EXPECT.tokenFile })
		.refine((s) => !s.includes("\0"), { error: EXPECT.tokenFile })
		.optional(),
};

/** Exactly one of the two token sources. */
function oneTokenSource(
	m: { token_env?: string; token_file?: string },
	ctx: z.RefinementCtx,
): void {
	if ((m.token_env === undefined) === (m.token_file === undefined))
		ctx.addIssue({
			code: "custom",
			message: EXPECT.tokenSource,
			params: {
				whole:
					m.token_env === undefined
						? `neither token_env nor token_file is set; expected ${EXPECT.tokenSource}`
						: `both token_env and token_file are set; expected ${EXPECT.tokenSource}`,
			},
		});
}

const clientSchema = z
	.strictObject(
		{
			...tokenSourceKeys,
			access: z.enum(ACCESS_LEVELS, { error: EXPECT.access }),
			machines: patterns(
				EXPECT.clientMachine,
				EXPECT.clientMachines,
			).optional(),
			projects: patterns(EXPECT.project, EXPECT.projects).optional(),
			approve: z.boolean({ error: EXPECT.approve }).optional(),
			max_active_runs: int(1, 10_000, EXPECT.maxActiveRuns).optional(),
			max_held: int(0, 100_000, EXPECT.maxHeld).optional(),
		},
		{ error: EXPECT.client },
	)
	.superRefine(oneTokenSource);

const machineSchema = z
	.strictObject(
		{
			url: z.string({ error: EXPECT.url }).transform((s, ctx) => {
				if (hasUserinfo(s)) return refuseUserinfo(ctx, EXPECT.urlUserinfo);
				const parsed = parseHttpOrigin(s);
				if (parsed !== undefined) return parsed;
				// Tell "a path was given" apart from "not an http(s) URL at all".
				return fail(
					ctx,
					s,
					parseHttpUrl(s) === undefined ? EXPECT.url : EXPECT.urlOnlyOrigin,
				);
			}),
			...tokenSourceKeys,
			projects: patterns(EXPECT.project, EXPECT.projects),
			model: z
				.string({ error: EXPECT.model })
				.transform((s, ctx) => {
					const slash = s.indexOf("/");
					const instanceId = s.slice(0, slash);
					const model = s.slice(slash + 1);
					if (
						slash < 0 ||
						!INSTANCE_ID.test(instanceId) ||
						model.trim() === ""
					) {
						return fail(ctx, s, EXPECT.model);
					}
					return { instanceId, model };
				})
				.optional(),
			options: z
				.record(
					z.string().min(1, { error: EXPECT.optionId }),
					z.union([z.string(), z.boolean()], { error: EXPECT.optionValue }),
					{ error: EXPECT.options },
				)
				.optional(),
			max_active_runs: int(1, 10_000, EXPECT.maxActiveRuns).optional(),
		},
		{ error: EXPECT.machine },
	)
	.superRefine(oneTokenSource);

export const fileSchema = z.strictObject({
	server: serverSchema.partial().optional(),
	machines: z
		.record(
			z.string().regex(MACHINE_NAME, { error: EXPECT.machineName }),
			machineSchema,
			{
				error: EXPECT.machines,
			},
		)
		.optional(),
	clients: z
		.record(
			z.string().regex(CLIENT_NAME, { error: EXPECT.clientName }),
			clientSchema,
			{ error: EXPECT.clients },
		)
		.optional(),
	approvals: approvalsSchema.optional(),
});

export type FileConfig = z.output<typeof fileSchema>;
export type FileMachine = z.output<typeof machineSchema>;
export type FileClient = z.output<typeof clientSchema>;
export type FileApprovals = z.output<typeof approvalsSchema>;

function fail(ctx: z.RefinementCtx, input: string, expected: string): never {
	ctx.addIssue({ code: "custom", message: expected, input });
	return z.NEVER;
}

/** A URL with a credential in it: refused without repeating the value (validateFile). */
function refuseUserinfo(ctx: z.RefinementCtx, expected: string): never {
	ctx.addIssue({ code: "custom", message: expected, params: { secret: true } });
	return z.NEVER;
}

/** Known keys per table, for "unknown key" messages. */
const KNOWN_KEYS = {
	root: Object.keys(fileSchema.shape),
	server: Object.keys(serverSchema.shape),
	machine: Object.keys(machineSchema.shape),
	client: Object.keys(clientSchema.shape),
	approvals: Object.keys(approvalsSchema.shape),
};

/**
 * Validates a parsed TOML document. `file` is the name shown in messages.
 * Returns the typed config, or every problem found (one per key).
 */
export function validateFile(
	raw: unknown,
	file: string,
): { ok: true; value: FileConfig } | { ok: false; problems: ConfigProblem[] } {
	const result = fileSchema.safeParse(raw);
	if (result.success) return { ok: true, value: result.data };
	const problems: ConfigProblem[] = [];
	const seen = new Set<string>();
	const add = (p: ConfigProblem) => {
		if (seen.has(p.key)) return;
		seen.add(p.key);
		problems.push(p);
	};
	for (const issue of result.error.issues) {
		if (issue.code === "unrecognized_keys") {
			for (const key of issue.keys) add(unknownKey(file, issue.path, key));
		} else if (issue.code === "invalid_key") {
			// The record's own message is about the table; the key's rule is in the nested issue.
			const expected = issue.issues[0]?.message ?? issue.message;
			add(
				expectedProblem(file, keyPath(issue.path), expected, issue.path.at(-1)),
			);
		} else {
			const value = valueAt(raw, issue.path);
			const key = keyPath(issue.path);
			const whole = issue.code === "custom" ? issue.params?.whole : undefined;
			if (typeof whole === "string") {
				add({ file, key, expected: issue.message, message: whole });
				continue;
			}
			const detail = issue.code === "custom" ? issue.params?.detail : undefined;
			// hook_url may embed a credential (many webhook URLs do), and any URL with userinfo
			// does: never echoed.
			const secret =
				key === "server.hook_url" ||
				key === "approvals.hook_url" ||
				(issue.code === "custom" && issue.params?.secret === true);
			const p = expectedProblem(file, key, issue.message, value, { secret });
			add(
				typeof detail === "string"
					? { ...p, message: `${p.message}: ${detail}` }
					: p,
			);
		}
	}
	return { ok: false, problems };
}

function unknownKey(
	file: string,
	parent: readonly PropertyKey[],
	key: string,
): ConfigProblem {
	const path = keyPath([...parent, key]);
	const env = SECRET_SERVER_KEYS[key];
	const inMachine = parent.length === 2 && parent[0] === "machines";
	const inClient = parent.length === 2 && parent[0] === "clients";
	const inApprovals = parent.length === 1 && parent[0] === "approvals";
	if (env !== undefined && !inMachine && !inClient && !inApprovals) {
		const expected = `no ${key} in the file; set the ${env} environment variable instead`;
		return {
			file,
			key: path,
			expected,
			message: `not allowed in the config file; set the ${env} environment variable instead`,
		};
	}
	if ((inMachine || inClient) && key === "token") {
		const expected =
			"the token in the environment variable named by token_env, or in the file named by token_file";
		return {
			file,
			key: path,
			expected,
			message: `not allowed in the config file; put the token in an environment variable named by token_env, or in a file named by token_file`,
		};
	}
	const known =
		parent.length === 0
			? KNOWN_KEYS.root
			: inMachine
				? KNOWN_KEYS.machine
				: inClient
					? KNOWN_KEYS.client
					: inApprovals
						? KNOWN_KEYS.approvals
						: KNOWN_KEYS.server;
	const expected = `one of ${known.join(", ")}`;
	return {
		file,
		key: path,
		expected,
		message: `unknown key; expected ${expected}`,
	};
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
	let cur: unknown = raw;
	for (const part of path) {
		if (cur === null || typeof cur !== "object") return undefined;
		cur = (cur as Record<PropertyKey, unknown>)[part];
	}
	return cur;
}
