/**
 * The steps of the connect sequence (PROTOCOL.md §0.3) after negotiation: the shell over HTTP,
 * a fresh ticket and the socket, and what a failure on the way means for the machine's state.
 */
import type { Logger } from "../../util/log.ts";
import { type MachineState, T3Error } from "../machine-api.ts";
import type { ShellSnapshot } from "../model.ts";
import {
	connectRpc,
	type RpcClient,
	type WebSocketCtor,
} from "../rpc/rpc-client.ts";
import type { T3Http } from "./http.ts";

/** The shell over HTTP; null when this server cannot serve it (the socket then sends it). */
export async function readShellOverHttp(
	http: T3Http,
	log: Logger,
): Promise<ShellSnapshot | null> {
	try {
		return await http.shell();
	} catch (err) {
		if (
			err instanceof T3Error &&
			(err.code === "NOT_FOUND" ||
				err.code === "BAD_RESPONSE" ||
				err.code === "SERVER_ERROR")
		) {
			log.debug("no shell over HTTP; the subscription will send it", {
				error: err.message,
			});
			return null;
		}
		throw err;
	}
}

export interface SocketOptions {
	http: T3Http;
	base: string;
	log: Logger;
	WebSocket?: WebSocketCtor;
	pingIntervalMs: number;
	pongTimeoutMs: number;
	now: () => number;
	stale: () => boolean;
}

/** The RPC socket, or null when the attempt went stale on the way (nothing is left open). */
export async function openMachineSocket(
	opts: SocketOptions,
): Promise<RpcClient | null> {
	// Tickets are short-lived and may be single-use: a fresh one per connect (§2.4).
	const { ticket } = await opts.http.websocketTicket();
	if (opts.stale()) return null;
	const wsUrl = `${opts.base.replace(/^http/, "ws")}/ws?wsTicket=${encodeURIComponent(ticket)}&orchestrationProtocol=2`;
	const client = await connectRpc({
		url: wsUrl,
		log: opts.log,
		...(opts.WebSocket ? { WebSocket: opts.WebSocket } : {}),
		pingIntervalMs: opts.pingIntervalMs,
		pongTimeoutMs: opts.pongTimeoutMs,
		now: opts.now,
	});
	if (opts.stale()) {
		client.close();
		return null;
	}
	return client;
}

/**
 * What a failed connect attempt means: a refusal of the token or the protocol is a state to stay
 * in (looked at again slowly); anything else is a drop, retried with backoff.
 */
export function connectFailure(
	err: unknown,
	label: string,
):
	| { kind: "refused"; state: MachineState; reason: string }
	| { kind: "drop"; reason: string } {
	const t3 =
		err instanceof T3Error ? err : new T3Error("UNREACHABLE", String(err));
	if (t3.code === "UNAUTHORIZED" || t3.code === "FORBIDDEN")
		return {
			kind: "refused",
			state: "unauthorized",
			reason: `${label}: ${t3.message}`,
		};
	if (t3.code === "INCOMPATIBLE")
		return {
			kind: "refused",
			state: "incompatible",
			reason: `${label}: ${t3.message}`,
		};
	return { kind: "drop", reason: t3.message };
}
