/**
 * The protocol-2 read models as the connector sees them after lenient decoding
 * (PROTOCOL.md §7, OBSERVED.md §6.5). Only fields the connector uses are typed; every
 * object keeps unknown keys at runtime. Fields absent on pre-release servers are optional.
 */

export type RunStatus =
	| "preparing"
	| "queued"
	| "starting"
	| "running"
	| "waiting"
	| "completed"
	| "interrupted"
	| "failed"
	| "cancelled"
	| "rolled_back"
	// Unknown future members are kept as plain strings, never rejected.
	| (string & {});

export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set([
	"completed",
	"interrupted",
	"failed",
	"cancelled",
	"rolled_back",
]);

export const BUSY_RUN_STATUSES: ReadonlySet<string> = new Set([
	"preparing",
	"queued",
	"starting",
	"running",
	"waiting",
]);

export interface ModelSelection {
	instanceId: string;
	model: string;
	options?: { id: string; value: string | boolean }[];
}

export interface ProjectShell {
	id: string;
	title: string;
	workspaceRoot: string;
	defaultModelSelection: ModelSelection | null;
	createdAt?: string;
	updatedAt?: string;
	[key: string]: unknown;
}

/** One `orchestration.searchThreads` match: a message containing the query. */
export interface SearchMatch {
	threadId: string;
	projectId: string | null;
	/** "user" | "assistant" (unknown values kept). */
	source: string;
	snippet: string;
	messageCreatedAt: string | null;
}

/** A persisted chat attachment as messages refer to it (never its bytes). */
export interface AttachmentRef {
	type: string;
	id: string;
	name: string;
	mimeType: string;
	sizeBytes: number;
	[key: string]: unknown;
}

export interface PendingRuntimeRequest {
	id: string;
	kind: string;
	createdAt?: string;
}

export interface ThreadShell {
	id: string;
	projectId: string;
	title: string;
	providerInstanceId?: string;
	modelSelection?: ModelSelection | null;
	runtimeMode?: string;
	interactionMode?: string;
	latestRunId: string | null;
	activeRunId: string | null;
	status: RunStatus | "idle";
	pendingRuntimeRequest: PendingRuntimeRequest | null;
	/** A held shell keeps only the role and text (decode/shell.ts). */
	latestVisibleMessage: {
		id?: string;
		role: string;
		text: string;
		updatedAt?: string;
	} | null;
	latestUserMessageAt?: string | null;
	lastError?: string | null;
	/** Released 0.1.x shells: the last failure's class, a usage limit's reset, T3's recovery plan. */
	lastErrorClass?: string | null;
	usageLimitResetAt?: string | null;
	limitRecovery?: {
		runId?: string;
		resetAt?: string;
		autoResume?: boolean;
	} | null;
	snoozedUntil?: string | null;
	/** How many `pendingBackgroundTasks` the shell lists (the held shell keeps only the count). */
	backgroundTaskCount?: number;
	createdAt?: string;
	updatedAt?: string;
	archivedAt?: string | null;
	deletedAt?: string | null;
	[key: string]: unknown;
}

export interface ShellSnapshot {
	schemaVersion?: number;
	snapshotSequence: number;
	projects: ProjectShell[];
	threads: ThreadShell[];
	archivedThreads?: ThreadShell[];
}

/** One item of `orchestration.subscribeShell` (PROTOCOL.md §8.2). */
export type ShellStreamItem =
	| {
			kind: "snapshot";
			snapshot: ShellSnapshot;
			resolvedRepositoryIdentityRoots?: string[];
	  }
	| { kind: "project.updated"; sequence: number; project: ProjectShell }
	| { kind: "project.removed"; sequence: number; projectId: string }
	| {
			kind: "thread.updated";
			sequence: number;
			location: string;
			thread: ThreadShell;
	  }
	| {
			kind: "thread.removed";
			sequence: number;
			location: string;
			threadId: string;
	  }
	| { kind: "synchronized" }
	| { kind: "unknown"; raw: unknown };

export interface Run {
	id: string;
	threadId: string;
	ordinal: number;
	userMessageId: string | null;
	status: RunStatus;
	requestedAt: string | null;
	startedAt: string | null;
	completedAt: string | null;
	modelSelection?: ModelSelection | null;
	/** A queued run held by an interrupt with `holdQueue` (newer servers only). */
	queueHeld?: boolean;
	/** A queued run's place in T3's delivery order (1 first); null once it starts. */
	queuePosition?: number | null;
	[key: string]: unknown;
}

export interface ConversationMessage {
	id: string;
	runId: string | null;
	role: string;
	text: string;
	streaming?: boolean;
	createdAt?: string;
	updatedAt?: string;
	[key: string]: unknown;
}

export interface UserInputQuestion {
	id: string;
	header?: string;
	question: string;
	options: { label: string; description?: string; value?: string }[];
	multiSelect?: boolean;
	allowCustomAnswer?: boolean;
	required?: boolean;
}

/** A timeline entry; discriminated by `type`, unknown types are kept as-is. */
export interface TurnItem {
	id: string;
	type: string;
	runId: string | null;
	ordinal?: number;
	status?: string;
	title?: string | null;
	// user_message / assistant_message / reasoning
	text?: string;
	streaming?: boolean;
	messageId?: string;
	// user_input_request / approval_request
	requestId?: string;
	questions?: UserInputQuestion[];
	requestKind?: string;
	prompt?: string;
	options?: { decision: string; label: string; warning?: string }[];
	// file_change / command_execution / checkpoint
	fileName?: string;
	input?: string;
	exitCode?: number | null;
	files?: {
		path: string;
		kind?: string;
		additions?: number;
		deletions?: number;
	}[];
	// error / interrupt / notice
	failure?: { class?: string; message?: string; code?: string | null } | null;
	message?: string;
	[key: string]: unknown;
}

export interface RuntimeRequest {
	id: string;
	kind: string;
	status: string;
	createdAt?: string;
	resolvedAt?: string | null;
	[key: string]: unknown;
}

export interface ProviderSession {
	id: string;
	providerInstanceId?: string;
	status?: string;
	model?: string | null;
	[key: string]: unknown;
}

export interface ThreadProjection {
	thread: ThreadShell;
	runs: Run[];
	messages: ConversationMessage[];
	turnItems: TurnItem[];
	runtimeRequests: RuntimeRequest[];
	providerSessions: ProviderSession[];
	[key: string]: unknown;
}

export interface ThreadDetail {
	snapshotSequence: number;
	projection: ThreadProjection;
}

export interface EnvironmentDescriptor {
	environmentId?: string;
	label?: string;
	serverVersion?: string;
	orchestrationProtocolVersion?: number;
	[key: string]: unknown;
}

export interface AuthSession {
	authenticated: boolean;
	scopes?: string[];
	sessionMethod?: string;
	expiresAt?: string;
	[key: string]: unknown;
}

export interface LaunchThreadResult {
	threadId: string;
	projection: ThreadProjection;
	resumed: boolean;
}
