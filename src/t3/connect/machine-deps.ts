/**
 * What a machine takes besides its config (machine.ts): clock, randomness, transport and the
 * timings of connect, reconnect and requests, each with a default there; tests replace them.
 */

import type { Logger } from "../../util/log.ts";
import type { WebSocketCtor } from "../rpc/rpc-client.ts";
import type { FetchLike } from "./http.ts";

export interface MachineDeps {
	log: Logger;
	fetch?: FetchLike;
	WebSocket?: WebSocketCtor;
	now?: () => number;
	random?: () => number;
	backoff?: { initialMs: number; maxMs: number; resetAfterMs: number };
	/**
	 * Silence on the socket after which the machine is offline (`T3CODE_MCP_PING_TIMEOUT_S`,
	 * default 10 s); pings go every third of it. Also the longest a tool call waits for an
	 * offline machine, or for a read from a machine that is not online.
	 */
	pingTimeoutMs?: number;
	/** Heartbeat of the shell socket (rpc-client.ts); default from `pingTimeoutMs`. */
	pingIntervalMs?: number;
	pongTimeoutMs?: number;
	httpTimeoutMs?: number;
	/**
	 * Where the expiry T3 reports for the machine's token is kept beyond this process (the
	 * state file), so a token dead after a restart still reads "expired"; memory only without.
	 */
	tokenExpiry?: {
		get(token: string): string | null;
		set(token: string, expiresAt: string | null): void;
	};
	/** How long dispatch/launchThread keep re-sending the same command after transport failures. */
	commandRetryMs?: number;
	/** Timeout of one RPC attempt. */
	requestTimeoutMs?: number;
	/** How long the shell subscription may take to reach `synchronized` before we reconnect. */
	syncTimeoutMs?: number;
	/**
	 * Treat a descriptor without `orchestrationProtocolVersion` as protocol 2. Only for the
	 * pre-release servers of OBSERVED.md §6.1, which speak V2 without advertising it.
	 */
	assumeProtocol2?: boolean;
}
