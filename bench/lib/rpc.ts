/**
 * A bare protocol-2 RPC client for driving simulators from the bench (seeding threads,
 * starting runs) without a shell subscription, so the sims only stream to the connector.
 * Request/Exit only (PROTOCOL.md §4); not the product's client.
 */
export interface SimRef {
	name: string;
	url: string;
	token: string;
}

export interface RpcClient {
	call(tag: string, payload: unknown, timeoutMs?: number): Promise<unknown>;
	close(): void;
}

export async function connectRpc(sim: SimRef): Promise<RpcClient> {
	const ws = new WebSocket(
		`${sim.url.replace("http", "ws")}/ws?orchestrationProtocol=2`,
		{
			headers: { Authorization: `Bearer ${sim.token}` },
		},
	);
	const pending = new Map<
		string,
		{ resolve: (v: unknown) => void; reject: (e: Error) => void }
	>();
	let nextId = 1;
	ws.addEventListener("message", (event) => {
		const frame = JSON.parse(String(event.data)) as {
			_tag: string;
			requestId?: string;
			exit?: { _tag: string; value?: unknown; cause?: unknown };
		};
		if (frame._tag === "Ping") ws.send(JSON.stringify({ _tag: "Pong" }));
		if (frame._tag !== "Exit" || !frame.requestId) return;
		const waiter = pending.get(frame.requestId);
		if (!waiter) return;
		pending.delete(frame.requestId);
		if (frame.exit?._tag === "Success") waiter.resolve(frame.exit.value);
		else
			waiter.reject(
				new Error(
					`rpc failed: ${JSON.stringify(frame.exit?.cause).slice(0, 300)}`,
				),
			);
	});
	ws.addEventListener("close", () => {
		for (const w of pending.values()) w.reject(new Error("rpc socket closed"));
		pending.clear();
	});
	await new Promise<void>((resolve, reject) => {
		ws.addEventListener("open", () => resolve(), { once: true });
		ws.addEventListener(
			"error",
			() => reject(new Error(`rpc: cannot open ${sim.url}`)),
			{ once: true },
		);
	});
	return {
		call(tag, payload, timeoutMs = 10_000) {
			const id = String(nextId++);
			return new Promise((resolve, reject) => {
				const timer = setTimeout(() => {
					pending.delete(id);
					reject(new Error(`rpc ${tag} timed out`));
				}, timeoutMs);
				pending.set(id, {
					resolve: (v) => {
						clearTimeout(timer);
						resolve(v);
					},
					reject: (e) => {
						clearTimeout(timer);
						reject(e);
					},
				});
				ws.send(
					JSON.stringify({ _tag: "Request", id, tag, payload, headers: [] }),
				);
			});
		},
		close: () => ws.close(1000, "done"),
	};
}

export async function firstProjectId(sim: SimRef): Promise<string> {
	const response = await fetch(`${sim.url}/api/orchestration/shell`, {
		headers: {
			authorization: `Bearer ${sim.token}`,
			"x-t3-orchestration-protocol": "2",
		},
	});
	const body = (await response.json()) as { projects: { id: string }[] };
	const id = body.projects[0]?.id;
	if (!id) throw new Error(`${sim.name}: no project`);
	return id;
}

const MODEL = { instanceId: "claudeAgent", model: "claude-opus-5" };

/** A thread with no run yet (no initialMessage): cheap to hold by the thousand. */
export async function createIdleThread(
	rpc: RpcClient,
	projectId: string,
	title: string,
): Promise<string> {
	const threadId = crypto.randomUUID();
	await rpc.call("orchestration.launchThread", {
		commandId: crypto.randomUUID(),
		creationSource: "mcp",
		threadId,
		projectId,
		title,
		modelSelection: MODEL,
		runtimeMode: "full-access",
		interactionMode: "default",
		workspaceStrategy: { type: "root" },
	});
	return threadId;
}

/** Starts a run in an existing thread, as `t3_dispatch` with thread_id would. */
export async function startRun(
	rpc: RpcClient,
	threadId: string,
	text: string,
): Promise<void> {
	await rpc.call("orchestration.dispatchCommand", {
		type: "message.dispatch",
		commandId: crypto.randomUUID(),
		threadId,
		messageId: crypto.randomUUID(),
		text,
		attachments: [],
		createdBy: "user",
		creationSource: "mcp",
		dispatchMode: { type: "start_immediately" },
	});
}
