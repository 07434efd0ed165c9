/** @jsxImportSource hono/jsx */
/**
 * The console's live stream (CONTRACT.md "Console"): server-sent events fed by the connector's
 * own change stream (each machine's shell changes, never a poll of T3), sending the changed rows
 * as each stream's client sees them now (its reach: a thread outside it is never named). A slow
 * browser never holds anything back: each stream has a bounded buffer, and a stream that falls
 * behind is closed (the page reconnects and redraws), never the events. Sign-out, expiry, a
 * changed token or a removed client close a session's streams.
 */
import type { FleetMachine } from "../fleet/fleet.ts";
import { servicesForClient } from "../rights/for-client.ts";
import type { Services } from "../services.ts";
import type { ShellChange } from "../t3/machine-api.ts";
import { machineRow } from "./overview.ts";
import { rowOfThread } from "./rows.ts";
import { currentClient, type Session } from "./sessions.ts";
import { MachineItem, ThreadRow } from "./view.tsx";

/** Messages a stream may have waiting before it is dropped as lagging. */
export const MAX_QUEUED = 1024;
const HEARTBEAT_MS = 25_000;
const encoder = new TextEncoder();

interface Stream {
	session: Session;
	controller: ReadableStreamDefaultController<Uint8Array>;
	closed: boolean;
}

export interface Live {
	/**
	 * The SSE response of a session's new stream. `since`: when its page's data was read; a
	 * change after it (before the stream opened) makes the stream's first message a redraw.
	 */
	open(session: Session, signal?: AbortSignal, since?: number): Response;
	/** Closes the streams of sessions for which `ended` says so. */
	closeWhere(ended: (session: Session) => boolean): void;
	/** Open streams (tests, bench). */
	count(): number;
	/** Streams dropped for lagging since start (tests). */
	dropped(): number;
	start(): void;
	stop(): void;
}

const frame = (event: string, data: unknown) =>
	encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

export function createLive(
	services: Services,
	options: { maxQueued?: number; stillValid: (session: Session) => boolean },
): Live {
	const maxQueued = options.maxQueued ?? MAX_QUEUED;
	const streams = new Set<Stream>();
	let droppedCount = 0;
	/** When the last change of a thread or machine was seen (epoch ms, the services' clock). */
	let lastChange = Number.NEGATIVE_INFINITY;
	let detach: (() => void) | undefined;
	let heartbeat: ReturnType<typeof setInterval> | undefined;

	const close = (stream: Stream) => {
		if (stream.closed) return;
		stream.closed = true;
		streams.delete(stream);
		try {
			stream.controller.close();
		} catch {
			// Already cancelled by the browser.
		}
		if (streams.size === 0 && heartbeat) {
			clearInterval(heartbeat);
			heartbeat = undefined;
		}
	};

	const send = (stream: Stream, bytes: Uint8Array) => {
		if (stream.closed) return;
		// More than the buffer waiting: this browser fell behind. Dropped, it reconnects and
		// redraws; nobody else waits for it.
		if ((stream.controller.desiredSize ?? 0) <= 0) {
			droppedCount += 1;
			close(stream);
			return;
		}
		stream.controller.enqueue(bytes);
	};

	/** The client a stream acts as now, or undefined when its session ended. */
	const clientOf = (stream: Stream) => {
		if (!options.stillValid(stream.session)) return undefined;
		return currentClient(services.config, stream.session.client.name);
	};

	const onChange = (entry: FleetMachine, change: ShellChange) => {
		const now = services.threadDeps.now();
		if (change.kind !== "synchronized" && change.kind !== "config")
			lastChange = now;
		if (streams.size === 0) return;
		// One rendering per client: streams of the same client see the same row.
		const made = new Map<string, Uint8Array | null>();
		for (const stream of [...streams]) {
			const client = clientOf(stream);
			if (!client) {
				close(stream);
				continue;
			}
			let bytes = made.get(client.name);
			if (bytes === undefined) {
				bytes = message(
					servicesForClient(services, client),
					entry,
					change,
					client,
					now,
				);
				made.set(client.name, bytes);
			}
			if (bytes !== null) send(stream, bytes);
		}
	};

	const message = (
		scoped: Services,
		entry: FleetMachine,
		change: ShellChange,
		client: Session["client"],
		now: number,
	): Uint8Array | null => {
		const reaches = scoped.fleet.get(entry.config.name) !== undefined;
		if (!reaches) return null;
		switch (change.kind) {
			case "thread": {
				const row = rowOfThread(scoped, change.thread.id, entry.config.name);
				if (row)
					return frame("row", {
						id: row.thread_id,
						section: row.state,
						html: String(<ThreadRow row={row} now={now} />),
					});
				const before = change.previous;
				const scopedEntry = scoped.fleet.get(entry.config.name);
				return before &&
					scopedEntry &&
					scoped.fleet.project(scopedEntry, before.projectId)
					? frame("gone", { id: change.thread.id })
					: null;
			}
			case "thread.removed": {
				const before = change.previous;
				const scopedEntry = scoped.fleet.get(entry.config.name);
				return before &&
					scopedEntry &&
					scoped.fleet.project(scopedEntry, before.projectId)
					? frame("gone", { id: change.threadId })
					: null;
			}
			case "state": {
				const scopedEntry = scoped.fleet.get(entry.config.name) as FleetMachine;
				const row = machineRow(scoped, scopedEntry, client, now);
				return frame("machine", {
					name: row.name,
					html: String(<MachineItem machine={row} now={now} />),
				});
			}
			case "snapshot":
			case "removed":
				return frame("redraw", {});
			default:
				return null;
		}
	};

	return {
		open(session, signal, since) {
			let stream: Stream | undefined;
			const body = new ReadableStream<Uint8Array>(
				{
					start(controller) {
						stream = { session, controller, closed: false };
						streams.add(stream);
						controller.enqueue(encoder.encode("retry: 2000\n\n"));
						// Changed between the page's read and this stream: the page redraws.
						if (since !== undefined && lastChange >= since)
							controller.enqueue(frame("redraw", {}));
						heartbeat ??= setInterval(() => {
							for (const s of [...streams]) {
								if (!clientOf(s)) close(s);
								else send(s, encoder.encode(": ping\n\n"));
							}
						}, HEARTBEAT_MS);
					},
					cancel() {
						if (stream) {
							stream.closed = true;
							streams.delete(stream);
						}
					},
				},
				new CountQueuingStrategy({ highWaterMark: maxQueued }),
			);
			signal?.addEventListener("abort", () => stream && close(stream), {
				once: true,
			});
			return new Response(body, {
				headers: {
					"content-type": "text/event-stream; charset=utf-8",
					"cache-control": "no-store",
					"x-content-type-options": "nosniff",
					"x-accel-buffering": "no",
				},
			});
		},
		closeWhere(ended) {
			for (const stream of [...streams])
				if (ended(stream.session)) close(stream);
		},
		count: () => streams.size,
		dropped: () => droppedCount,
		start() {
			detach ??= services.fleet.forEachMachine((entry) =>
				entry.machine.onChange((change) => onChange(entry, change)),
			);
		},
		stop() {
			detach?.();
			detach = undefined;
			for (const stream of [...streams]) close(stream);
		},
	};
}
