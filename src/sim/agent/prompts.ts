/**
 * Every prompt the simulated agent understands, with what it does: the one list `sim --help`
 * and the `demo` banner print. The agent matches them case-insensitively anywhere in the
 * message (agent.ts, longer prompts before their prefixes); prompts.test.ts holds the
 * scripts to this list.
 */
import {
	PULL_REQUEST_PROMPT,
	REMEMBER_PROMPT,
	STATUS_PROMPT,
} from "./parallel-scripts.ts";
import { PREPARATION_FAILURE_PROMPT } from "./preparation-failure.ts";
import { USAGE_LIMIT_PROMPT } from "./usage-limit.ts";
import { BACKGROUND_TASK_PROMPT } from "./wake-run.ts";

export interface SimPrompt {
	prompt: string;
	does: string;
}

export const SIM_PROMPTS: readonly SimPrompt[] = [
	{
		prompt: "ask me",
		does: "asks a question (Red or Blue), then says what you chose",
	},
	{ prompt: "ask me several", does: "a multi-select question" },
	{
		prompt: "ask me strictly",
		does: "a question with options only, no free text",
	},
	{ prompt: "ask me two things", does: "a required and an optional question" },
	{ prompt: "ask me optionally", does: "a question you may dismiss" },
	{
		prompt: "approve",
		does: 'runs a command; asks first with runtime_mode "approval-required"',
	},
	{ prompt: "run a command", does: 'the same as "approve"' },
	{
		prompt: "approve with options",
		does: "an approval with choices, one carrying a warning",
	},
	{
		prompt: "approve after restart",
		does: "an approval T3 can no longer deliver an answer to (not resumable)",
	},
	{ prompt: "sign in again", does: "an auth_refresh request" },
	{
		prompt: "call a client tool",
		does: "a dynamic_tool request a T3 client answers",
	},
	{
		prompt: "call a client tool after restart",
		does: "a dynamic_tool request nobody can answer",
	},
	{
		prompt: "edit a file",
		does: "edits src/app.ts (asks first when the mode says so)",
	},
	{ prompt: "big edit", does: "writes a 2500-line file" },
	{
		prompt: "long task",
		does: "keeps running until interrupted; steer it or restart it with t3_dispatch mode",
	},
	{
		prompt: USAGE_LIMIT_PROMPT,
		does: "fails with error_class usage_limit, reset_at and auto_resume",
	},
	{
		prompt: PREPARATION_FAILURE_PROMPT,
		does: "fails while preparing the workspace",
	},
	{
		prompt: "run a failing command",
		does: "a command that fails with long output (its whole output: t3_thread item_id)",
	},
	{
		prompt: BACKGROUND_TASK_PROMPT,
		does: "background work; T3 wakes the thread itself when it ends (started_by t3)",
	},
	{ prompt: "fail", does: "the run fails" },
	{ prompt: "slow", does: "streams its answer piece by piece" },
	{
		prompt: STATUS_PROMPT,
		does: "what the thread's checkout changed (worktrees leave the root untouched)",
	},
	{
		prompt: REMEMBER_PROMPT,
		does: "the conversation it carries (a fork_of thread carries its parent's)",
	},
	{
		prompt: PULL_REQUEST_PROMPT,
		does: 'links a pull request to the thread ("… titled X" names it)',
	},
];

/** What any other prompt does. */
export const OTHER_PROMPTS =
	"runs ls, adds a line to NOTES.md and echoes your message";

/** One line per prompt, quoted and aligned, for help texts and banners. */
export function simPromptLines(indent: string): string[] {
	const rows = [
		...SIM_PROMPTS.map((p) => [`"${p.prompt}"`, p.does] as const),
		["anything else", OTHER_PROMPTS] as const,
	];
	const width = Math.max(...rows.map(([name]) => name.length));
	return rows.map(([name, does]) => `${indent}${name.padEnd(width)}  ${does}`);
}
