/**
 * What one T3 machine connection offers the rest of the connector. The protocol client
 * (src/t3) implements it; tools, waits and events depend only on this shape, never on
 * sockets or frames. It knows nothing about MCP.
 */
import type { MachineConfig } from "../config/types.ts";
import { redact } from "../util/redact.ts";
import type { ProviderStatus } from "./capabilities/provider-status.ts";
import type {
	AttachmentRef,
	LaunchThreadResult,
	ProjectShell,
	SearchMatch,
	ThreadDetail,
	ThreadProjection,
	ThreadShell,
	TurnItem,
} from "./model.ts";

export type MachineState =
	| "connecting"
	| "online"
	| "offline"
	| "unauthorized"
	| "incompatible";

export interface MachineStatus {
	state: MachineState;
	/** Why the machine is not online (names the machine and the cause); null when online. */
	reason: string | null;
	serverVersion: string | null;
	/** Epoch ms of the last shell item applied. */
	lastEventAt: number | null;
	/**
	 * Epoch ms since when the machine has not been online (it left online, or first failed to
	 * connect); null while online or before its first attempt ended. Reconnect attempts in
	 * between do not reset it.
	 */
	downSince?: number | null;
	/**
	 * When the machine's token stops working, as T3 last said (`/api/auth/session` `expiresAt`);
	 * null or absent when unknown.
	 */
	tokenExpiresAt?: string | null;
}

/** A change the machine's shell subscription applied, in order. */
export type ShellChange =
	| {
			kind: "thread";
			thread: ThreadShell;
			sequence: number;
			previous: ThreadShell | undefined;
	  }
	| {
			kind: "thread.removed";
			threadId: string;
			sequence: number;
			previous: ThreadShell | undefined;
	  }
	/** An authoritative snapshot replaced the shell (after connect / reconnect / fallback). */
	| { kind: "snapshot"; sequence: number }
	/** Catch-up is done: the shell is live from here. */
	| { kind: "synchronized"; sequence: number }
	| { kind: "state"; status: MachineStatus }
	/** T3 said its configuration (providers, models, settings) changed (`subscribeServerConfig`). */
	| { kind: "config" }
	/** The machine left the config (a reload): it stops now and is no longer in the fleet. */
	| { kind: "removed" };

export type T3ErrorCode =
	| "UNREACHABLE"
	| "TIMEOUT"
	| "UNAUTHORIZED"
	| "FORBIDDEN"
	| "NOT_FOUND"
	| "INCOMPATIBLE"
	| "BAD_RESPONSE"
	| "SERVER_ERROR"
	/** A typed `Fail` from an RPC (e.g. OrchestrationV2DispatchCommandError). */
	| "REJECTED"
	/** A `Die` defect from an RPC (e.g. schema decode failure on the server). */
	| "DEFECT"
	| "DISCONNECTED"
	/** An id that cannot be a URL path segment (path-segment.ts): refused before sending. */
	| "INVALID_ID";

/**
 * A failure talking to T3. Its message often quotes the server (an error body, a close reason),
 * so it is redacted on construction: whoever shows or logs it gets a safe text.
 */
export class T3Error extends Error {
	override readonly name = "T3Error";
	constructor(
		readonly code: T3ErrorCode,
		message: string,
		/**
		 * For REJECTED: the error `_tag`; for HTTP: the status. `retried`: the command had been
		 * sent before this answer (after a lost reply), so a refusal may hide an earlier success.
		 */
		readonly detail?: {
			tag?: string;
			status?: number;
			raw?: unknown;
			retried?: boolean;
		},
	) {
		super(redact(message));
	}
}

export interface Machine {
	readonly name: string;
	readonly url: string;
	/** The current status: a snapshot shared with other readers, never to be changed. */
	status(): Readonly<MachineStatus>;
	/** Latest shell state held in memory (all projects, not filtered by the allowlist). */
	projects(): ProjectShell[];
	threads(): ThreadShell[];
	thread(threadId: string): ThreadShell | undefined;
	/** Highest shell sequence applied (the resume cursor). */
	sequence(): number;
	/** Subscribe to shell changes; returns an unsubscribe function. */
	onChange(listener: (change: ShellChange) => void): () => void;
	/** Resolves once the machine is online and synchronized, or rejects with its reason. */
	ready(timeoutMs?: number): Promise<void>;
	/**
	 * Resolves once the machine is no longer `connecting` (online, or its first attempt failed),
	 * or after `timeoutMs`; never rejects. What the fleet's bounded start waits for.
	 */
	settled(timeoutMs: number): Promise<void>;
	start(): void;
	stop(): Promise<void>;
	/**
	 * Connects anew with another config (its url or token changed at a reload): the same
	 * machine to its listeners, as after a dropped connection. Absent on test fakes.
	 */
	reconnect?(config: MachineConfig): Promise<void>;
	/** Stops for good after telling its listeners `{kind: "removed"}` (left the config). */
	retire?(): Promise<void>;
	/**
	 * HTTP `GET /api/orchestration/threads/:id` (full projection). NOT_FOUND when unknown.
	 * `covers`: a reader that needs only recent runs accepts a followed bounded window (the
	 * latest turns) for which it answers true, instead of a GET of the whole history.
	 */
	getThread(
		threadId: string,
		options?: { covers?: (projection: ThreadProjection) => boolean },
	): Promise<ThreadDetail>;
	/**
	 * RPC `orchestration.dispatchCommand`. The same command (same commandId) is re-sent after a
	 * transport failure until `commandRetryMs` runs out, so a lost reply never runs it twice.
	 */
	dispatch(
		command: Record<string, unknown> & { type: string; commandId: string },
	): Promise<{ sequence: number }>;
	/** RPC `orchestration.launchThread`, retried with the same commandId like `dispatch`. */
	launchThread(
		input: Record<string, unknown> & { commandId: string },
	): Promise<LaunchThreadResult>;
	/** RPC `orchestration.getArchivedShellSnapshot`: the archived threads (PROTOCOL.md §5). */
	archivedThreads(): Promise<ThreadShell[]>;
	/**
	 * RPC `orchestration.getTurnDiff` (`from` given) or `orchestration.getFullThreadDiff` (from the
	 * thread's start): the unified diff between two checkpoints (turn count = run ordinal).
	 * REJECTED when T3 has no checkpoint for a turn.
	 */
	turnDiff(input: {
		threadId: string;
		fromTurnCount?: number;
		toTurnCount: number;
	}): Promise<{ diff: string }>;
	/**
	 * RPC `orchestration.getTurnItem` (newer servers only): one timeline item with the output the
	 * thread's reads withhold; null when T3 has no such item. DEFECT on a server without the RPC.
	 */
	turnItem?(input: {
		threadId: string;
		itemId: string;
	}): Promise<TurnItem | null>;
	/**
	 * RPC `orchestration.searchThreads` (newer servers): messages containing `query` (2–200
	 * characters), at most `limit` (≤ 50). DEFECT on a server without the RPC.
	 */
	searchThreads?(input: {
		query: string;
		limit: number;
		timeoutMs?: number;
	}): Promise<SearchMatch[]>;
	/**
	 * RPC `projects.mutate` `project.create`, retried with the same commandId like `dispatch`.
	 * The project is in `projects()` when it resolves. DEFECT on a server without it.
	 */
	createProject?(input: {
		commandId: string;
		projectId: string;
		title: string;
		workspaceRoot: string;
		createWorkspaceRootIfMissing: boolean;
	}): Promise<ProjectShell>;
	/**
	 * RPC `assets.persistChatAttachments` (newer servers): stores a message's attachments
	 * before the message is sent; the references go into the message. DEFECT where absent.
	 */
	persistAttachments?(input: {
		threadId: string;
		messageId: string;
		attachments: {
			type: string;
			name: string;
			mimeType: string;
			sizeBytes: number;
			dataUrl: string;
		}[];
	}): Promise<AttachmentRef[]>;
	/**
	 * Each provider instance's status and usage limits as `subscribeServerConfig` last pushed
	 * them (provider-status.ts); null before T3 said anything. Absent on test fakes.
	 */
	providers?(): readonly ProviderStatus[] | null;
	/** RPC `server.getConfig` (provider instances and models). */
	serverConfig(): Promise<Record<string, unknown>>;
	/**
	 * Whether this server takes `message.dispatch` `deliveryIntent`: as its descriptor's
	 * `serverResolvedCommandContext` says, else its answer to a probe (delivery-intent.ts), asked
	 * once per connection. Absent: treat as false.
	 */
	deliveryIntent?(): Promise<boolean>;
	/**
	 * Opens a stream on the current connection (it ends with that connection); null while the
	 * machine is not online. Absent on test fakes.
	 */
	openStream?(
		tag: string,
		payload: unknown,
		onItem: (value: unknown) => void,
		onEnd: (end: MachineStreamEnd) => void,
	): { cancel(): void } | null;
	/**
	 * Follows the thread on its own stream (thread-follow.ts) while the returned lease is held;
	 * absent on a machine without thread following.
	 */
	follow?(threadId: string): () => void;
	/**
	 * The newest message of a thread followed now, from its stream: what a shell of the newest
	 * T3 leaves out (`latestVisibleMessage: null`); null when not followed or without one.
	 */
	followedMessage?(threadId: string): ThreadShell["latestVisibleMessage"];
	/**
	 * The projection of a thread followed now and caught up on its stream (its latest turns at
	 * least), from memory with no request; null when not followed. What a wait's progress reads.
	 */
	followedProjection?(threadId: string): ThreadProjection | null;
	/**
	 * Threads followed now (`live`: caught up on their stream), and how many could not be
	 * followed (bound reached, stream lost).
	 */
	followStats?(): { followed: number; live: number; fallbacks: number };
	/**
	 * Called after a command that starts work on a thread was accepted (message.dispatch,
	 * launchThread with a message); returns an unsubscribe function.
	 */
	onWorkSent?(listener: (threadId: string) => void): () => void;
}

/** How a stream opened with `openStream` ended. */
export type MachineStreamEnd =
	| { ok: true }
	| { ok: false; kind: "disconnected" | "fail" | "die" | "interrupt" };
