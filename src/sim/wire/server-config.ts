/**
 * What the simulator advertises: the environment descriptor (PROTOCOL.md §1.1), the auth
 * descriptor and `server.getConfig` with the provider instances of providers.ts (§9).
 */
import type { SimContext } from "../context.ts";

export function environmentDescriptor(
	ctx: SimContext,
): Record<string, unknown> {
	return {
		environmentId: ctx.environmentId,
		label: ctx.label,
		platform: { os: "linux", arch: "x64" },
		serverVersion: ctx.serverVersion,
		// Absent on protocol-1 servers: that is how clients tell them apart (PROTOCOL.md §1.1).
		...(ctx.protocol === 1
			? {}
			: { orchestrationProtocolVersion: ctx.protocol }),
		capabilities: {
			connectionProbe: true,
			repositoryIdentity: true,
			threadSettlement: true,
			// Commands resolved against the server's own thread state (`deliveryIntent`), the
			// flag T3's clients gate on (idx 70155598390, 70174805780).
			...(ctx.commandContext === undefined
				? {}
				: { serverResolvedCommandContext: ctx.commandContext }),
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
	return {
		environment: environmentDescriptor(ctx),
		auth: AUTH_DESCRIPTOR,
		cwd: [...ctx.store.projects.values()][0]?.row.workspaceRoot ?? "/srv/t3",
		keybindingsConfigPath: "/srv/t3/userdata/keybindings.json",
		keybindings: [],
		issues: [],
		providers: structuredClone(ctx.config.providers),
		availableEditors: [],
		observability: {
			logsDirectoryPath: "/srv/t3/userdata/logs",
			localTracingEnabled: false,
			otlpTracesEnabled: false,
			otlpMetricsEnabled: false,
		},
		settings: { enableAssistantStreaming: true },
		shellResumeCompletionMarker: true,
		threadResumeCompletionMarker: true,
		threadSnapshotPagination: false,
	};
}
