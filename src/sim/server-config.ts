/**
 * What the simulator advertises: the environment descriptor (PROTOCOL.md §1.1), the auth
 * descriptor and `server.getConfig` with two provider instances and their models (§9).
 */
import type { SimContext } from "./context.ts";

const effort = (values: string[], current: string) => ({
	id: "effort",
	label: "Reasoning",
	type: "select",
	options: values.map((id) => ({
		id,
		label: id[0]?.toUpperCase() + id.slice(1),
		...(id === current ? { isDefault: true } : {}),
	})),
	currentValue: current,
});
const fastMode = {
	id: "fastMode",
	label: "Fast mode",
	type: "boolean",
	currentValue: false,
};

const PROVIDERS = [
	{
		instanceId: "claudeAgent",
		driver: "claudeAgent",
		displayName: "Claude",
		models: [
			{
				slug: "claude-opus-5",
				name: "Claude Opus 5",
				isDefault: true,
				options: [
					effort(["low", "medium", "high", "xhigh", "max"], "high"),
					fastMode,
				],
			},
			{
				slug: "claude-sonnet-5",
				name: "Claude Sonnet 5",
				options: [effort(["low", "medium", "high"], "medium")],
			},
		],
	},
	{
		instanceId: "codex",
		driver: "codex",
		displayName: "Codex",
		models: [
			{
				slug: "gpt-5.6-sol",
				name: "GPT-5.6 Sol",
				isDefault: true,
				options: [
					{
						...effort(["low", "medium", "high", "xhigh"], "medium"),
						id: "reasoningEffort",
					},
					fastMode,
				],
			},
		],
	},
];

export function environmentDescriptor(
	ctx: SimContext,
): Record<string, unknown> {
	return {
		environmentId: ctx.environmentId,
		label: ctx.label,
		platform: { os: "linux", arch: "x64" },
		serverVersion: ctx.serverVersion,
		// Absent on protocol-1 servers: that is how clients tell them apart (PROTOCOL.md §1.1).
		...(ctx.protocol === 2 ? { orchestrationProtocolVersion: 2 } : {}),
		capabilities: {
			connectionProbe: true,
			repositoryIdentity: true,
			threadSettlement: true,
		},
	};
}

export const AUTH_DESCRIPTOR = {
	policy: "remote-reachable",
	bootstrapMethods: ["one-time-token"],
	sessionMethods: ["browser-session-cookie", "bearer-access-token"],
	sessionCookieName: "t3_session",
};

export function serverConfig(ctx: SimContext): Record<string, unknown> {
	const now = new Date().toISOString();
	return {
		environment: environmentDescriptor(ctx),
		auth: AUTH_DESCRIPTOR,
		cwd: [...ctx.store.projects.values()][0]?.row.workspaceRoot ?? "/srv/t3",
		keybindings: [],
		issues: [],
		providers: PROVIDERS.map((p) => ({
			instanceId: p.instanceId,
			driver: p.driver,
			displayName: p.displayName,
			enabled: true,
			installed: true,
			version: "sim",
			status: "ready",
			auth: { status: "authenticated" },
			checkedAt: now,
			models: p.models.map((m) => ({
				slug: m.slug,
				name: m.name,
				isCustom: false,
				isDefault: m.isDefault ?? false,
				capabilities: { optionDescriptors: m.options },
			})),
		})),
		availableEditors: [],
		settings: { enableAssistantStreaming: true },
		shellResumeCompletionMarker: true,
		threadResumeCompletionMarker: true,
		threadSnapshotPagination: false,
	};
}
