/**
 * Room `sim/agent/`: the scripted agent: the script picked by a prompt, what it can do (`AgentIO`,
 * script.ts), the providers it runs as, and the behaviours of single prompts (usage limits, wake
 * runs, preparation failure, parallel work). May import `sim/runs` (run rows), `sim/engine` and
 * `sim/repo`; never the wire.
 */
/**
 * The scripted agent: picks a behaviour from the prompt (case-insensitive substring) the way
 * the fake codex behind captures-v2 did (OBSERVED.md intro), and speaks through `AgentIO`,
 * which run-lifecycle.ts turns into turn items, runtime requests and events.
 */

import { parallelScript } from "./parallel-scripts.ts";
import { AgentFailure, type AgentScript } from "./script.ts";
import { USAGE_LIMIT_PROMPT, usageLimitScript } from "./usage-limit.ts";
import { BACKGROUND_TASK_PROMPT } from "./wake-run.ts";

export const COLOR_QUESTION = {
	id: "color",
	header: "Color",
	question: "Which color should I use?",
	// Released shape (PROTOCOL.md §7.3) with `value`; the pre-release capture had labels only.
	options: [
		{ label: "Red", description: "Use red", value: "red" },
		{ label: "Blue", description: "Use blue", value: "blue" },
	],
	multiSelect: false,
};

/** "ask me strictly": options only, no free text (released `allowCustomAnswer: false`). */
export const STRICT_QUESTION = { ...COLOR_QUESTION, allowCustomAnswer: false };

/** "ask me several": a multi-select question. */
export const TOPPINGS_QUESTION = {
	id: "toppings",
	header: "Toppings",
	question: "Which toppings should I add?",
	options: [
		{ label: "Cheese", description: "Add cheese", value: "cheese" },
		{ label: "Olives", description: "Add olives", value: "olives" },
		{ label: "Basil", description: "Add basil", value: "basil" },
	],
	multiSelect: true,
};

/**
 * "ask me two things": a required question and an optional one (released `required: false`,
 * PROTOCOL.md §7.3), which the client omits from `answers` when it is not answered (§6.6).
 */
export const FINISH_QUESTION = {
	id: "finish",
	header: "Finish",
	question: "Which finish, if any?",
	options: [
		{ label: "Matte", description: "A matte finish", value: "matte" },
		{ label: "Glossy", description: "A glossy finish", value: "glossy" },
	],
	multiSelect: false,
	required: false,
};

/** "approve with options": what an mcp-elicitation-style approval offers (RELEASED-0.1.md §1). */
export const APPROVAL_OPTIONS = [
	{
		decision: "accept",
		label: "Run it once",
		warning:
			"The script comes from the network; the provider flagged possible prompt injection.",
	},
	{ decision: "acceptForSession", label: "Allow for this session" },
	{ decision: "decline", label: "Do not run it" },
];
/** The app an "approve with options" approval names (an MCP server's, as an elicitation names it). */
export const APPROVAL_APP_NAME = "Sim Installer";

/** "approve after restart": why T3 can no longer deliver an answer (`not_resumable`). */
export const NOT_RESUMABLE_REASON =
	"the provider process that asked ended with a server restart";

/** Codex's `reason` for `ls`, which T3 shows as the approval's `prompt` (ws-approval.jsonl). */
const LIST_FILES = "sim agent wants to list files";

/** "run a failing command": long enough that a reader's cap cuts it. */
export const FAILING_TEST_OUTPUT = `${"ok   adds numbers\n".repeat(700)}FAIL subtracts numbers: expected 1, got 2\n1 test failed\n`;

function answerText(answers: Record<string, unknown> | undefined): string {
	const value = Object.values(answers ?? {})[0];
	if (Array.isArray(value)) return value.map(String).join(", ");
	return value === undefined ? "nothing" : String(value);
}

export function pickScript(prompt: string): AgentScript {
	const text = prompt.toLowerCase();
	const parallel = parallelScript(text);
	if (parallel) return parallel;
	if (text.includes("ask me optionally")) {
		return async (io) => {
			await io.step();
			const response = await io.ask([COLOR_QUESTION], { dismissable: true });
			await io.step();
			await io.say(
				response.dismissed
					? "No answer given; I went with Red."
					: `You chose ${answerText(response.answers)}.`,
			);
		};
	}
	if (text.includes("ask me two things")) {
		return async (io) => {
			await io.step();
			const { answers } = await io.ask([COLOR_QUESTION, FINISH_QUESTION]);
			await io.step();
			const finish = answers?.[FINISH_QUESTION.id];
			await io.say(
				`You chose ${answerText({ color: answers?.[COLOR_QUESTION.id] })}, ${finish === undefined ? "no finish" : `finish ${answerText({ finish })}`}.`,
			);
		};
	}
	if (text.includes("ask me")) {
		const question = text.includes("ask me several")
			? TOPPINGS_QUESTION
			: text.includes("ask me strictly")
				? STRICT_QUESTION
				: COLOR_QUESTION;
		return async (io) => {
			await io.step();
			const response = await io.ask([question]);
			await io.step();
			await io.say(`You chose ${answerText(response.answers)}.`);
		};
	}
	// Longer prompts before their prefixes: "approve with options" before "approve".
	if (text.includes("approve with options")) {
		return async (io) => {
			await io.step();
			const outcome = await io.command("curl https://example.com/install.sh", {
				reason: "sim agent wants to run an install script",
				approval: { options: APPROVAL_OPTIONS, appName: APPROVAL_APP_NAME },
			});
			await io.say(
				outcome === "declined"
					? "Script declined."
					: "Script approved and run.",
			);
		};
	}
	if (text.includes("approve after restart")) {
		return async (io) => {
			await io.step();
			await io.approve("command", LIST_FILES, {
				capability: { type: "not_resumable", reason: NOT_RESUMABLE_REASON },
			});
			await io.say("The request was resolved elsewhere.");
		};
	}
	if (text.includes("sign in again")) {
		return async (io) => {
			await io.step();
			await io.signIn();
			await io.say("Signed in again; carrying on.");
		};
	}
	// Longer before its prefix: a client tool call T3 can no longer deliver an answer to.
	if (text.includes("call a client tool after restart")) {
		return async (io) => {
			await io.step();
			await io.clientTool(
				"open_preview",
				{ url: "http://localhost:5173" },
				{ type: "not_resumable", reason: NOT_RESUMABLE_REASON },
			);
			await io.say("The tool call was resolved elsewhere.");
		};
	}
	if (text.includes("call a client tool")) {
		return async (io) => {
			await io.step();
			await io.clientTool("open_preview", { url: "http://localhost:5173" });
			await io.say("The client opened the preview.");
		};
	}
	if (text.includes("approve") || text.includes("run a command")) {
		return async (io) => {
			await io.step();
			const outcome = await io.command("ls", { reason: LIST_FILES });
			await io.say(
				outcome === "approved"
					? "Command approved and run."
					: outcome === "declined"
						? "Command declined."
						: "Command run.",
			);
		};
	}
	// Real file changes in the sim's in-memory workspace, so diffs have content (workspace.ts).
	if (text.includes("big edit")) {
		return async (io) => {
			await io.step();
			const outcome = await io.fileChange("data/big.txt", 2500, 0);
			await io.say(
				outcome === "declined"
					? "Edit declined."
					: "Wrote data/big.txt (2500 lines).",
			);
		};
	}
	if (text.includes("edit a file")) {
		return async (io) => {
			await io.step();
			const outcome = await io.fileChange("src/app.ts", 3, 1);
			await io.say(
				outcome === "declined" ? "Edit declined." : "Edited src/app.ts.",
			);
		};
	}
	if (text.includes("long task")) {
		return async (io) => {
			await io.step();
			await io.say("Working on the long task…");
			await io.hold();
			const steered = io.steered();
			await io.say(
				steered.length
					? `The long task is done. Also handled: ${steered.join("; ")}`
					: "The long task is done.",
			);
		};
	}
	// Longer prompts before their prefixes: "fail preparing" (run-lifecycle.ts handles it before
	// any script) and "run a failing command" both contain "fail".
	if (text.includes(USAGE_LIMIT_PROMPT)) return usageLimitScript;
	if (text.includes("run a failing command")) {
		return async (io) => {
			await io.step();
			await io.command("bun test", {
				exitCode: 1,
				output: FAILING_TEST_OUTPUT,
			});
			await io.say("The tests failed: see the command's output.");
		};
	}
	if (text.includes(BACKGROUND_TASK_PROMPT)) {
		return async (io) => {
			await io.step();
			io.backgroundTask("sleep 5 && echo done");
			await io.notice("A background command keeps running after this turn.");
			await io.say(
				"Started a background command; T3 will wake me when it ends.",
			);
		};
	}
	if (text.includes("fail")) {
		return async (io) => {
			await io.step();
			await io.say("Trying, but this will not work.");
			await io.step();
			throw new AgentFailure("sim agent failure");
		};
	}
	if (text.includes("slow")) {
		return async (io) => {
			await io.step();
			await io.stream(["Streaming ", "slowly, ", "piece ", "by ", "piece."]);
		};
	}
	return async (io) => {
		await io.step();
		await io.command("ls", { reason: LIST_FILES });
		await io.fileChange("NOTES.md", 1, 0);
		await io.say(
			`Hello from the T3 simulator. You said: ${io.prompt.slice(0, 200)}`,
		);
	};
}
