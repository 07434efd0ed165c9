/**
 * The provider instances the simulator advertises in `server.getConfig` (PROTOCOL.md §9,
 * shapes as in captures-v2 ws-server.getConfig.json): two ready ones with plan mode
 * (claudeAgent, codex), one ready without plan mode (grok: `showInteractionModeToggle:
 * false`), one installed but not authenticated (opencode) and one disabled (cursor); and
 * `restartsteer`, an instance of the grok driver, which steers only by interrupt-and-restart
 * (steering.ts).
 * Tests change them at run time through `Sim.setProvider`.
 */
type Row = Record<string, unknown>;

interface Choice {
	id: string;
	label: string;
}

function select(
	id: string,
	label: string,
	choices: Choice[],
	current: string,
): Row {
	return {
		id,
		label,
		type: "select",
		options: choices.map((c) =>
			c.id === current ? { ...c, isDefault: true } : c,
		),
		currentValue: current,
	};
}

const boolean = (id: string, label: string): Row => ({
	id,
	label,
	type: "boolean",
});

const EFFORT: Choice[] = [
	{ id: "low", label: "Low" },
	{ id: "medium", label: "Medium" },
	{ id: "high", label: "High" },
	{ id: "xhigh", label: "Extra High" },
	{ id: "max", label: "Max" },
	{ id: "ultrathink", label: "Ultrathink" },
];
const CONTEXT: Choice[] = [
	{ id: "200k", label: "200k" },
	{ id: "1m", label: "1M" },
];

function model(
	slug: string,
	name: string,
	descriptors: Row[],
	extra: Row = {},
): Row {
	return {
		slug,
		name,
		isCustom: false,
		...extra,
		capabilities: { optionDescriptors: descriptors },
	};
}

function provider(
	instanceId: string,
	displayName: string,
	fields: Row,
	models: Row[],
): Row {
	return {
		instanceId,
		driver: instanceId,
		displayName,
		continuation: { groupKey: `${instanceId}:instance:${instanceId}` },
		showInteractionModeToggle: true,
		enabled: true,
		installed: true,
		version: "sim",
		status: "ready",
		auth: { status: "authenticated" },
		checkedAt: new Date().toISOString(),
		...fields,
		models,
		slashCommands: [],
		skills: [],
	};
}

/** A fresh copy of the simulator's providers (each sim mutates its own). */
export function defaultProviders(): Row[] {
	return [
		provider(
			"claudeAgent",
			"Claude",
			{ auth: { status: "authenticated", type: "apiKey", label: "API key" } },
			[
				model(
					"claude-opus-5",
					"Claude Opus 5",
					[
						select("effort", "Reasoning", EFFORT, "high"),
						boolean("fastMode", "Fast Mode"),
						select("contextWindow", "Context Window", CONTEXT, "1m"),
					],
					{ isDefault: true },
				),
				model("claude-sonnet-5", "Claude Sonnet 5", [
					select("effort", "Reasoning", EFFORT.slice(0, 3), "high"),
					select("contextWindow", "Context Window", CONTEXT, "200k"),
				]),
				model("claude-haiku-4-5", "Claude Haiku 4.5", [
					boolean("thinking", "Thinking"),
				]),
			],
		),
		provider(
			"codex",
			"Codex",
			{
				auth: {
					status: "authenticated",
					type: "apiKey",
					label: "OpenAI API Key",
				},
			},
			[
				model(
					"gpt-5.6-sol",
					"GPT-5.6 Sol",
					[
						select(
							"reasoningEffort",
							"Reasoning",
							EFFORT.slice(0, 4),
							"medium",
						),
						boolean("fastMode", "Fast Mode"),
					],
					{ isDefault: true },
				),
				model("gpt-5.6-luna", "GPT-5.6 Luna", [
					select("reasoningEffort", "Reasoning", EFFORT.slice(0, 2), "low"),
				]),
			],
		),
		provider(
			"grok",
			"Grok",
			// Like the real grok instance: no plan mode, a new thread for a model change.
			{
				showInteractionModeToggle: false,
				requiresNewThreadForModelChange: true,
			},
			[model("grok-build", "Grok Build", [])],
		),
		provider(
			"restartsteer",
			"Restart-steer",
			// Another instance of the grok driver: steered only by interrupt-and-restart.
			{ driver: "grok" },
			[model("steady", "Steady", [])],
		),
		provider(
			"opencode",
			"OpenCode",
			{
				status: "error",
				auth: { status: "unauthenticated" },
				message:
					"OpenCode is not authenticated. Run `opencode auth login` on the machine.",
			},
			// Model slugs may contain "/" (PROTOCOL.md §9): "opencode/openrouter/qwen3-coder".
			[model("openrouter/qwen3-coder", "Qwen3 Coder (OpenRouter)", [])],
		),
		provider(
			"cursor",
			"Cursor",
			{
				enabled: false,
				installed: false,
				version: null,
				status: "disabled",
				auth: { status: "unknown" },
				message: "Cursor is disabled in T3 Code settings.",
			},
			[],
		),
	];
}
