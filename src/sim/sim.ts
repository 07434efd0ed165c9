/**
 * `startSim`: wires store, engine, auth and the wire protocol into one Bun.serve on
 * loopback, and exposes the fault-injection and introspection handle tests drive. The `/ws`
 * upgrade lives here: 426 gate first (PROTOCOL.md §1.3), then ticket or bearer auth (§2.4).
 */
import type { Server, ServerWebSocket } from "bun";
import { type SimCompat, simHas } from "./compat.ts";
import type { SimContext } from "./context.ts";
import { createAttachmentStore } from "./engine/attachments.ts";
import { createEngine } from "./engine/engine.ts";
import { createProjectMutations } from "./engine/project-create.ts";
import { newId, nowIso } from "./engine/rows.ts";
import { createScheduler } from "./engine/scheduler.ts";
import { createStore } from "./engine/store.ts";
import { createOutcomeTimes } from "./runs/outcome-times.ts";
import type { Sim, SimOptions } from "./types.ts";
import {
	bearerOf,
	createAuth,
	OPERATE_SCOPE,
	READ_SCOPE,
} from "./wire/auth.ts";
import { createConfigState, setProvider } from "./wire/config-stream.ts";
import { createHostile, hostileResponse } from "./wire/hostile.ts";
import { authInvalid, handleHttp, json } from "./wire/http-routes.ts";
import { createPairing } from "./wire/pairing.ts";
import { type ConnData, createConnection } from "./wire/rpc-server.ts";
import { applyUsageOption, hitUsageLimit, setUsage } from "./wire/usage.ts";

const DEFAULT_PROJECTS = [{ title: "demo", workspaceRoot: "/srv/t3/demo" }];

/** The descriptor's flag: the newest contract has it (idx 70155598390), the pre-release not. */
function commandContextOf(
	options: SimOptions,
	compat: SimCompat,
): boolean | undefined {
	const flag =
		options.serverResolvedCommandContext ??
		(simHas(compat, "deliveryIntent") ? true : "absent");
	return flag === "absent" ? undefined : flag;
}

export async function startSim(options: SimOptions = {}): Promise<Sim> {
	const host = options.host ?? "127.0.0.1";
	const token = options.token ?? `sim-${newId()}`;
	const compat = options.compat ?? "current";
	const store = createStore({
		shellMessages: options.shellWithoutMessages !== true,
	});
	for (const project of options.projects ?? DEFAULT_PROJECTS)
		store.addProject(project);
	const scheduler = options.scheduler ?? createScheduler();
	const outcomes = createOutcomeTimes();
	store.subscribe((entry) => outcomes.noteEvent(entry.event, entry.sequence));
	const attachments = createAttachmentStore();
	const engine = createEngine({
		store,
		attachments,
		scheduler,
		stepMs: options.stepMs ?? 20,
		compat,
		queueHolding: options.queueHolding,
		onUsageLimit: (instanceId, resetAt) =>
			hitUsageLimit(ctx, instanceId, resetAt),
	});
	const now = options.now ?? Date.now;
	const auth = createAuth(
		[{ token, scopes: [READ_SCOPE, OPERATE_SCOPE] }, ...(options.tokens ?? [])],
		now,
	);
	const pairing = createPairing(auth, now);
	const requests: Record<string, number> = {};
	const ctx: SimContext = {
		protocol: options.protocol ?? 2,
		compat,
		// A real server coalesces shell deltas in windows of up to 50 ms (PROTOCOL.md §8.2).
		coalesceMs: options.coalesceMs ?? 50,
		commandContext: commandContextOf(options, compat),
		serverVersion: options.serverVersion ?? "0.1.0-sim",
		label: options.label ?? "T3 simulator",
		environmentId: `sim-${newId()}`,
		store,
		engine,
		attachments,
		projectMutations: createProjectMutations(store),
		auth,
		scheduler,
		outcomes,
		config: createConfigState(),
		faults: {
			blackholed: false,
			delayMs: 0,
			dropReplies: new Map(),
			refuseCommands: new Map(),
		},
		wire: { recording: false, frames: [], requests },
		...(options.hostile
			? {
					hostile: createHostile(
						options.hostile === true ? {} : options.hostile,
					),
				}
			: {}),
		count: (key) => {
			requests[key] = (requests[key] ?? 0) + 1;
		},
	};
	applyUsageOption(ctx, options.usage);
	const sockets = new Set<ServerWebSocket<ConnData>>();
	let nextConnId = 1;
	let stopped = false;

	function upgrade(
		request: Request,
		server: Server<ConnData>,
		url: URL,
	): Response | undefined {
		ctx.count("GET /ws");
		if (
			ctx.protocol !== 1 &&
			url.searchParams.get("orchestrationProtocol") !== String(ctx.protocol)
		) {
			// Checked before auth, so a ticket is not consumed by a mismatched client.
			return json(426, {
				code: "orchestration_protocol_incompatible",
				message: `Update this client to one that supports orchestration protocol ${ctx.protocol}.`,
				orchestrationProtocolVersion: ctx.protocol,
			});
		}
		const ticket = url.searchParams.get("wsTicket");
		const bearer = bearerOf(request);
		ctx.hostile?.saw(bearer);
		if (ticket === null && bearer === undefined)
			return authInvalid("missing_credential");
		const session =
			ticket !== null ? auth.redeemTicket(ticket) : auth.verify(bearer);
		if (!session) return authInvalid("invalid_credential");
		const data: ConnData = { id: nextConnId++, scopes: [...session.scopes] };
		if (server.upgrade(request, { data })) return undefined;
		return json(400, { message: "Expected a WebSocket upgrade" });
	}

	function listen(port: number): Server<ConnData> {
		return Bun.serve<ConnData>({
			hostname: host,
			port,
			idleTimeout: 60,
			async fetch(request, server) {
				const url = new URL(request.url);
				if (url.pathname === "/ws") return upgrade(request, server, url);
				if (url.pathname === "/oauth/token") {
					ctx.count("POST /oauth/token");
					return pairing.exchange(request);
				}
				let shown: string[] = [];
				ctx.hostile?.saw(bearerOf(request));
				let response = handleHttp(ctx, request, (ids) => {
					shown = ids;
				});
				if (ctx.hostile)
					response = await hostileResponse(ctx.hostile, response);
				const delay = ctx.faults.delayMs;
				if (delay > 0)
					await new Promise((resolve) => setTimeout(resolve, delay));
				// A read showing a finished run is its outcome on the wire too (the floor).
				if (shown.length > 0) ctx.outcomes.noteRead(shown);
				return response;
			},
			websocket: {
				open(ws) {
					sockets.add(ws);
					ws.data.conn = createConnection(ctx, ws);
				},
				message(ws, message) {
					ws.data.conn?.onMessage(message);
				},
				close(ws) {
					sockets.delete(ws);
					ws.data.conn?.onClose();
				},
			},
		});
	}

	let server = listen(options.port ?? 0);
	const port = server.port ?? options.port ?? 0;
	const url = `http://${host}:${port}`;

	function closeSockets(): void {
		for (const ws of [...sockets]) ws.data.conn?.terminate();
		sockets.clear();
	}

	return {
		url,
		compat,
		port,
		token,
		pairingLink: (linkOptions) => pairing.link(url, linkOptions),
		async stop() {
			if (stopped) return;
			stopped = true;
			closeSockets();
			engine.cancelAll();
			scheduler.cancelAll();
			await server.stop(true);
		},
		async restart(restartOptions = {}) {
			closeSockets();
			await server.stop(true);
			// A real restart cancels every run that was not finished (OBSERVED.md §5.6).
			if (restartOptions.loseState) engine.wipe();
			else engine.cancelAll();
			scheduler.cancelAll();
			server = listen(port);
		},
		snoozeThread(threadId, until) {
			// As another client's `thread.snooze` / `thread.unsnooze`.
			const outcome = engine.dispatch(
				until === null
					? {
							type: "thread.unsnooze",
							commandId: newId(),
							threadId,
							reason: "user",
						}
					: {
							type: "thread.snooze",
							commandId: newId(),
							threadId,
							snoozedUntil: until,
						},
			);
			if (!("ok" in outcome))
				throw new Error(`sim: cannot snooze thread ${threadId}`);
		},
		deleteThread(threadId) {
			// Exactly what another client's `thread.delete` does.
			const outcome = engine.dispatch({
				type: "thread.delete",
				commandId: newId(),
				threadId,
			});
			if (!("ok" in outcome))
				throw new Error(`sim: cannot delete thread ${threadId}`);
		},
		seedMessage(threadId, message) {
			const thread = store.liveThread(threadId);
			if (!thread) throw new Error(`sim: no active thread ${threadId}`);
			const at = nowIso();
			store.upsert(
				thread,
				"messages",
				{
					id: `message-${newId()}`,
					threadId,
					runId: null,
					role: message.role,
					text: message.text,
					attachments: [],
					streaming: false,
					createdAt: at,
					updatedAt: at,
				},
				"message.updated",
			);
		},
		dropSockets: closeSockets,
		blackhole(on) {
			ctx.faults.blackholed = on;
		},
		revokeToken: (t) => auth.revoke(t),
		restoreToken: (t) => auth.restore(t),
		setDelay(ms) {
			ctx.faults.delayMs = ms;
		},
		dropNextReply(tag) {
			ctx.faults.dropReplies.set(
				tag,
				(ctx.faults.dropReplies.get(tag) ?? 0) + 1,
			);
		},
		refuseNextCommand(type) {
			ctx.faults.refuseCommands.set(
				type,
				(ctx.faults.refuseCommands.get(type) ?? 0) + 1,
			);
		},
		finishRun: (threadId) => engine.finishRun(threadId),
		projects: () =>
			[...store.projects.values()].map((p) => ({
				id: String(p.row.id),
				title: String(p.row.title),
				workspaceRoot: String(p.row.workspaceRoot),
			})),
		threadIds: () =>
			[...store.threads.values()]
				.filter((t) => !t.app.deletedAt)
				.map((t) => t.id),
		projection(threadId) {
			const thread = store.threads.get(threadId);
			return thread ? store.projection(thread) : undefined;
		},
		stats: () => ({
			connections: sockets.size,
			unackedChunks: [...sockets].reduce(
				(n, ws) => n + (ws.data.conn?.unacked() ?? 0),
				0,
			),
			shellUpdates: outcomes.shellUpdates(),
			requests: { ...requests },
		}),
		record(on) {
			ctx.wire.recording = on;
		},
		frames: () => [...ctx.wire.frames],
		runOutcome: (runId) => outcomes.get(runId),
		runOutcomes: () => outcomes.all(),
		setProvider: (instanceId, patch, options) =>
			setProvider(ctx, instanceId, patch, options?.notify ?? true),
		setUsage: (instanceId, windows) => setUsage(ctx, instanceId, windows),
	};
}
