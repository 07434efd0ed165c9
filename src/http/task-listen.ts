/**
 * `subscriptions/listen` with `notifications.taskIds` (MCP Tasks, 2026-07-28): the SDK's listen
 * router knows only list and resource changes, so a listen that names tasks is served here. The
 * stream acknowledges the ids it will report (known and visible ones), sends each one's current
 * state, then a `notifications/tasks` carrying the full task (what `tasks/get` returns) on each
 * change, until the client closes it. No timer per task: one keep-alive per stream.
 */
import {
	SERVER_INFO_META_KEY,
	SUBSCRIPTION_ID_META_KEY,
} from "@modelcontextprotocol/server";
import {
	hasTasksExtension,
	modernTask,
	TASKS_EXTENSION,
} from "../mcp/tasks.ts";
import type { Services } from "../services.ts";

const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const MAX_TASK_IDS = 1_000;

type Message = {
	jsonrpc?: string;
	id?: string | number | null;
	method?: string;
	params?: {
		notifications?: Record<string, unknown>;
		_meta?: Record<string, unknown>;
	};
};

/** A listen request that names tasks (else the SDK serves it). */
export function isTaskListen(message: unknown): message is Message {
	const m = message as Message | null;
	return (
		typeof m === "object" &&
		m !== null &&
		m.method === "subscriptions/listen" &&
		Array.isArray(m.params?.notifications?.taskIds)
	);
}

export function serveTaskListen(
	message: Message,
	services: Services,
	signal: AbortSignal,
	keepAliveMs: number,
): Response {
	const id = message.id ?? null;
	if (!hasTasksExtension(message.params?._meta?.[CLIENT_CAPABILITIES]))
		return Response.json({
			jsonrpc: "2.0",
			id,
			error: {
				code: -32021,
				message:
					"Missing required client capability: task notifications need the io.modelcontextprotocol/tasks extension in this request's client capabilities",
				data: {
					requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
				},
			},
		});
	const requested = message.params?.notifications ?? {};
	const ids = (requested.taskIds as unknown[])
		.filter((t): t is string => typeof t === "string")
		.slice(0, MAX_TASK_IDS);
	const honored = [...new Set(ids)].filter(
		(taskId) => services.tasks.get(taskId) !== undefined,
	);
	const meta = { [SUBSCRIPTION_ID_META_KEY]: id };
	const encoder = new TextEncoder();
	const cleanups: (() => void)[] = [];
	let closed = false;
	let controller: ReadableStreamDefaultController<Uint8Array>;
	const frame = (text: string) => {
		if (closed) return;
		try {
			controller.enqueue(encoder.encode(text));
		} catch {
			teardown();
		}
	};
	const send = (method: string, params: Record<string, unknown>) =>
		frame(
			`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method, params })}\n\n`,
		);
	const teardown = () => {
		if (closed) return;
		closed = true;
		for (const cleanup of cleanups) cleanup();
		try {
			controller.close();
		} catch {}
	};
	const stream = new ReadableStream<Uint8Array>({
		start(c) {
			controller = c;
			send("notifications/subscriptions/acknowledged", {
				notifications: {
					taskIds: honored,
					// The tool list never changes while the server runs; nothing else is offered.
					...(requested.toolsListChanged === true
						? { toolsListChanged: true }
						: {}),
				},
				_meta: meta,
			});
			if (honored.length === 0 && requested.toolsListChanged !== true) {
				frame(
					`event: message\ndata: ${JSON.stringify({
						jsonrpc: "2.0",
						id,
						result: {
							resultType: "complete",
							_meta: {
								...meta,
								[SERVER_INFO_META_KEY]: {
									name: "t3code-mcp",
									version: services.version,
								},
							},
						},
					})}\n\n`,
				);
				teardown();
				return;
			}
			// A task that expires just stops being reported (there is no status for "gone").
			const report = (task: ReturnType<typeof modernTask> | undefined) => {
				if (task)
					send("notifications/tasks", { ...modernTask(task), _meta: meta });
			};
			for (const taskId of honored) {
				cleanups.push(services.tasks.listen(taskId, report));
				const now = services.tasks.get(taskId);
				if (now) report(now);
			}
			const keepAlive = setInterval(
				() => frame(": keepalive\n\n"),
				keepAliveMs,
			);
			cleanups.push(() => clearInterval(keepAlive));
		},
		cancel() {
			teardown();
		},
	});
	if (signal.aborted) teardown();
	else {
		const onAbort = () => teardown();
		signal.addEventListener("abort", onAbort, { once: true });
		cleanups.push(() => signal.removeEventListener("abort", onAbort));
	}
	return new Response(stream, {
		status: 200,
		headers: {
			"content-type": "text/event-stream",
			"cache-control": "no-cache, no-transform",
			connection: "keep-alive",
			"x-accel-buffering": "no",
		},
	});
}
