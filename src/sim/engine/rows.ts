/**
 * Id formats and row builders for the simulated Orchestration V2 read model. The id shapes
 * copy the real engine's (captures-v2/ws-launchThread.result.json) so clients that log or
 * compare ids see realistic values; clients must never parse them (PROTOCOL.md §6.1).
 */

export type Row = Record<string, unknown> & { id: string };

const enc = encodeURIComponent;

export const newId = (): string => crypto.randomUUID();
export const nowIso = (): string => new Date().toISOString();

export const runIdFor = (threadId: string, ordinal: number): string =>
	`run:thread:${threadId}:ordinal:${ordinal}`;
export const rootNodeIdFor = (runId: string): string =>
	`node:run:${enc(runId)}:root`;
export const attemptIdFor = (runId: string, attempt = 1): string =>
	`run-attempt:run:${enc(runId)}:attempt:${attempt}`;
export const providerThreadIdFor = (
	instanceId: string,
	firstRunId: string,
): string =>
	`provider-thread:provider:${instanceId}:native-thread:pending${enc(`:${firstRunId}`)}`;
export const providerSessionIdFor = (instanceId: string): string =>
	`provider-session:provider-instance:${instanceId}:shared`;
export const providerTurnIdFor = (instanceId: string): string =>
	`provider-turn:provider:${instanceId}:native-turn:${newId()}`;
export const checkpointScopeIdFor = (threadId: string): string =>
	`checkpoint-scope:thread:${threadId}:name:root`;
export const checkpointIdFor = (scopeId: string, n: number): string =>
	`checkpoint:scope:${enc(scopeId)}:name:${n}`;
export const runtimeRequestIdFor = (
	instanceId: string,
	providerTurnId: string,
	callId: string,
): string =>
	`runtime-request:provider:${instanceId}:provider-turn:${enc(providerTurnId)}:native-request:${callId}:${newId()}`;
export const assistantMessageIdFor = (
	instanceId: string,
	nativeId: string,
): string => `message:provider:${instanceId}:native-item:${nativeId}`;
export const providerItemIdFor = (
	instanceId: string,
	nativeId: string,
): string => `turn-item:provider:${instanceId}:native-item:${nativeId}`;
export const providerNodeIdFor = (
	instanceId: string,
	nativeId: string,
): string => `node:provider:${instanceId}:native-item:${nativeId}`;

export const nativeRef = (driver: string, nativeId: string) => ({
	driver,
	nativeId,
	strength: "strong",
});

/** Capabilities the shared provider session advertises (trimmed from the capture). */
export const SESSION_CAPABILITIES = {
	sessions: {
		supportsMultipleProviderThreadsPerSession: true,
		supportsModelSwitchInSession: true,
		supportsProviderSwitchingViaHandoff: true,
		supportsRuntimeModeSwitchInSession: true,
		pendingRequestsSurviveRestart: false,
	},
	turns: {
		exposesNativeTurnId: true,
		emitsTurnStarted: true,
		emitsTurnCompleted: true,
		supportsInterrupt: true,
		supportsActiveSteering: false,
		supportsSteeringByInterruptRestart: false,
		supportsQueuedMessages: true,
		terminalStatusQuality: "strong",
	},
} as const;
