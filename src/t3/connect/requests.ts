/**
 * What a call does with a machine that may be down: the socket to use once it is online,
 * commands re-sent with the same payload after transport failures (PROTOCOL.md §6.1), and reads
 * that give up with the machine's state instead of hanging on a stopped server.
 */

import { T3Error } from "../machine-api.ts";
import type { RpcClient } from "../rpc/rpc-client.ts";
import {
	type MachineLink,
	nextState,
	notOnline,
	terminalError,
} from "./link.ts";

/** How long a read waits for a machine that is (re)connecting before giving up. */
export const READ_CONNECT_WAIT_MS = 5_000;

export interface Requests {
	onlineClient(deadline: number): Promise<RpcClient>;
	whileReachable<T>(work: Promise<T>): Promise<T>;
	sendCommand(tag: string, payload: unknown): Promise<unknown>;
	readRpc(tag: string, payload: unknown): Promise<unknown>;
}

export function createRequests(
	link: MachineLink,
	options: {
		pingTimeoutMs: number;
		commandRetryMs: number;
		requestTimeoutMs: number;
	},
): Requests {
	const { pingTimeoutMs, commandRetryMs, requestTimeoutMs } = options;
	const { log, now } = link;

	/**
	 * The socket to send a command on, once the machine is online. A machine that is down gets
	 * at most one ping timeout to come back (a blip or a restart does), and none after it went
	 * silent (a stopped server would only hang the caller): the caller hears its state instead.
	 */
	async function onlineClient(deadline: number): Promise<RpcClient> {
		const waitUntil = Math.min(deadline, now() + pingTimeoutMs);
		for (;;) {
			const terminal = terminalError(link);
			if (terminal) throw terminal;
			if (link.status.state === "online" && link.rpc?.isOpen()) return link.rpc;
			const remaining = waitUntil - now();
			if (remaining <= 0 || link.silentDrop) throw notOnline(link);
			await nextState(link, remaining);
		}
	}

	/**
	 * An HTTP read that gives up with the machine's state when the machine goes down meanwhile;
	 * when it is not online to begin with, after one ping timeout, or at once when it went
	 * silent: a stopped server accepts the connection and then never answers.
	 */
	function whileReachable<T>(work: Promise<T>): Promise<T> {
		return new Promise<T>((resolve, reject) => {
			let timer: ReturnType<typeof setTimeout> | undefined;
			const done = () => {
				if (timer) clearTimeout(timer);
				link.stateWaiters.delete(wake);
			};
			const wake = () => {
				if (link.status.state === "online") return;
				done();
				reject(notOnline(link));
			};
			if (link.status.state === "online") link.stateWaiters.add(wake);
			else if (link.silentDrop) {
				work.catch(() => {}); // abandoned: its own timeout ends it
				reject(notOnline(link));
				return;
			} else timer = setTimeout(wake, pingTimeoutMs);
			work.then(
				(value) => {
					done();
					resolve(value);
				},
				(error) => {
					done();
					reject(error);
				},
			);
		});
	}

	/** Send one command, re-sending the identical payload after transport failures (§6.1). */
	async function sendCommand(tag: string, payload: unknown): Promise<unknown> {
		const deadline = now() + commandRetryMs;
		let lastError: T3Error | undefined;
		for (;;) {
			let client: RpcClient;
			try {
				client = await onlineClient(deadline);
			} catch (err) {
				// After a silent drop the machine's state says more than "connection lost".
				throw lastError &&
					!link.silentDrop &&
					err instanceof T3Error &&
					err.code === "UNREACHABLE"
					? lastError
					: err;
			}
			const remaining = Math.max(
				1,
				Math.min(requestTimeoutMs, deadline - now()),
			);
			try {
				return await client.request(tag, payload, { timeoutMs: remaining });
			} catch (err) {
				if (
					err instanceof T3Error &&
					(err.code === "DISCONNECTED" || err.code === "TIMEOUT")
				) {
					lastError = err;
					log.warn("command uncertain, will re-send the same command", {
						tag,
						code: err.code,
					});
					if (now() >= deadline) throw err;
					// After a drop, onlineClient() waits for the reconnect before the re-send.
					continue;
				}
				// A refusal of a re-send does not prove the first send was refused too (the wire
				// does not tell "rejected" from "already done"): callers must treat it as uncertain.
				if (lastError && err instanceof T3Error) {
					throw new T3Error(err.code, err.message, {
						...err.detail,
						retried: true,
					});
				}
				throw err;
			}
		}
	}

	/** One read RPC on the live socket: reads are not re-sent, and wait at most briefly for a connect. */
	async function readRpc(tag: string, payload: unknown): Promise<unknown> {
		const client = await onlineClient(now() + READ_CONNECT_WAIT_MS);
		return client.request(tag, payload, { timeoutMs: requestTimeoutMs });
	}

	return { onlineClient, whileReachable, sendCommand, readRpc };
}
