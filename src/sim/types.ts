/**
 * Public types of the protocol-2 T3 Code simulator: the options `startSim` takes and the
 * handle it returns. Integration tests and the `demo`/`sim` commands code against these.
 */
import type { SimCompat } from "./compat.ts";
import type { Scheduler } from "./engine/scheduler.ts";
import type { RunOutcomeTimes } from "./runs/outcome-times.ts";
import type { HostileOptions } from "./wire/hostile.ts";
import type { PairingLinkOptions } from "./wire/pairing.ts";
import type { SimUsageWindow } from "./wire/usage.ts";

export type { RunOutcomeTimes } from "./runs/outcome-times.ts";
export type { PairingLinkOptions } from "./wire/pairing.ts";
export type { SimUsageWindow } from "./wire/usage.ts";

export interface SimProjectOption {
	id?: string;
	title: string;
	workspaceRoot: string;
	/** T3's default for new threads: the root checkout (local) or a new worktree. */
	defaultThreadEnvMode?: "local" | "worktree";
}

export interface SimTokenOption {
	token: string;
	scopes: string[];
	/** ISO time; default 30 days from start. After it the token is refused. */
	expiresAt?: string;
}

export interface SimOptions {
	/** Default "127.0.0.1". */
	host?: string;
	/** Default 0 (ephemeral). */
	port?: number;
	/** Default "current"; "prerelease" = the pre-release V2 engine (compat.ts). */
	compat?: SimCompat;
	/**
	 * Default 2; 1 = behave like a protocol-1 server (no negotiation, V1 route shapes); 3 = a
	 * newer server than this connector knows (its descriptor and `/ws` gate say 3).
	 */
	protocol?: 1 | 2 | 3;
	/** The default full token (orchestration:read + orchestration:operate); default random. */
	token?: string;
	/** Extra tokens, e.g. a read-only one. */
	tokens?: SimTokenOption[];
	/** Default one project: {title:"demo", workspaceRoot:"/srv/t3/demo"}. */
	projects?: SimProjectOption[];
	/** Pacing between scripted agent steps; default 20. */
	stepMs?: number;
	/** Echo the bearer it sees into every text it sends (hostile.ts); default off. */
	hostile?: boolean | HostileOptions;
	/**
	 * Shell-stream coalescing window; default 50 like a real server (PROTOCOL.md §8.2); 0 =
	 * emit every change at once. The thread stream is never coalesced.
	 */
	coalesceMs?: number;
	/**
	 * Default true. false = a server without queue holding (OBSERVED.md §6.4 15, captures-v2
	 * ws-busy.jsonl): `run.interrupt` ignores `holdQueue`, queued runs start after an interrupt,
	 * and `queue.resume` is an unknown command.
	 */
	queueHolding?: boolean;
	/**
	 * The descriptor's `capabilities.serverResolvedCommandContext` (what T3's clients read before
	 * they send `deliveryIntent`, idx 70174805780). Default true on "current", absent on
	 * "prerelease"; "absent" = a descriptor without the flag (the connector then probes).
	 */
	serverResolvedCommandContext?: boolean | "absent";
	/**
	 * Thread shells carry `latestVisibleMessage: null`, as the newest T3 projection code sends
	 * ("Thread detail owns message bodies", idx 70189692800); default false (filled in).
	 */
	shellWithoutMessages?: boolean;
	/** Timers for pacing and coalescing (tests may pass their own for determinism). */
	scheduler?: Scheduler;
	/** Default "0.1.0-sim". */
	serverVersion?: string;
	label?: string;
	/** Clock for token, ticket and pairing-link expiry; default Date.now. */
	now?: () => number;
	/**
	 * Providers' usage windows as T3 reports them (`sim --usage`, wire/usage.ts); a provider
	 * without any reports none. Ignored by the pre-release engine.
	 */
	usage?: SimUsageWindow[];
}

export interface SimFrame {
	dir: "send" | "recv";
	conn: number;
	frame: unknown;
}

export interface SimStats {
	connections: number;
	/** Streams whose last Chunk has not been acked yet (the sim holds their next Chunk). */
	unackedChunks: number;
	/** Shell `thread.updated` items sent on all connections. */
	shellUpdates: number;
	/** Requests seen, by RPC tag or by "METHOD /route". */
	requests: Record<string, number>;
}

export interface Sim {
	/** http://HOST:PORT, no trailing slash. */
	url: string;
	port: number;
	token: string;
	/** Which T3 Code this simulator imitates (compat.ts). */
	compat: SimCompat;
	/**
	 * A new single-use pairing link (`<url>/pair#token=<credential>`); its exchange at
	 * `/oauth/token` issues a 30-day token. `scopes` (default read + operate) is what it grants.
	 */
	pairingLink(options?: PairingLinkOptions): string;
	stop(): Promise<void>;
	/**
	 * Close sockets, stop listening, cancel non-terminal runs, listen again on the same port.
	 * `loseState`: come back with no threads and sequences from zero (a wiped or replaced database).
	 */
	restart(options?: { loseState?: boolean }): Promise<void>;
	/** Snooze a thread until `until` (ISO time), or wake it (null), as another T3 client would. */
	snoozeThread(threadId: string, until: string | null): void;
	/** Delete a thread as another T3 client would (`thread.delete`), not through the connector. */
	deleteThread(threadId: string): void;
	/**
	 * Append a message to a thread outside any run, as if written long ago (a thread with a
	 * history): it becomes the shell's `latestVisibleMessage` where the imitated T3 sends one.
	 * For benchmarks that need threads with replies without running thousands of runs.
	 */
	seedMessage(
		threadId: string,
		message: { role: "user" | "assistant"; text: string },
	): void;
	/** Close every WebSocket abruptly. */
	dropSockets(): void;
	/** While on, sockets stay open but nothing at all is sent (no Pong, Chunk or Exit). */
	blackhole(on: boolean): void;
	revokeToken(token: string): void;
	restoreToken(token: string): void;
	/** Delay every HTTP response and RPC reply. */
	setDelay(ms: number): void;
	/** Execute the next RPC with this tag, never send its Exit, then close that socket. */
	dropNextReply(tag: string): void;
	/**
	 * Refuse the next `dispatchCommand` of this command type (e.g. "message.dispatch") without
	 * running it, with the typed failure T3 answers a command it will not take.
	 */
	refuseNextCommand(type: string): void;
	/**
	 * Let a held "long task" run finish normally; end the thread's background tasks now; bring a
	 * usage limit's reset forward (T3 then resumes the thread by itself).
	 */
	finishRun(threadId: string): void;
	threadIds(): string[];
	/** The projects it holds now (configured and created through projects.mutate). */
	projects(): SimProjectOption[];
	projection(threadId: string): unknown | undefined;
	stats(): SimStats;
	record(on: boolean): void;
	frames(): SimFrame[];
	/** When a run's outcome was written and first sent on any stream (outcome-times.ts). */
	runOutcome(runId: string): RunOutcomeTimes | undefined;
	runOutcomes(): RunOutcomeTimes[];
	/**
	 * Change one provider instance of `server.getConfig` (merged into it, e.g.
	 * `{auth: {status: "authenticated"}}`); subscribers of `subscribeServerConfig` hear of it
	 * unless `notify` is false (then only a fresh `server.getConfig` shows it).
	 */
	setProvider(
		instanceId: string,
		patch: Record<string, unknown>,
		options?: { notify?: boolean },
	): void;
	/**
	 * Sets a provider's usage windows (a window of the same kind is replaced), or `null` for
	 * none; subscribers of `subscribeServerConfig` hear of it (`providerStatuses`, at most every
	 * 200 ms). Does nothing on the pre-release engine.
	 */
	setUsage(
		instanceId: string,
		windows: Omit<SimUsageWindow, "provider">[] | null,
	): void;
}
