/**
 * `AgentIO` for one run: turns the scripted agent's steps (say, stream, command, file change,
 * question, approval, hold) into messages, turn items, nodes and runtime requests, shaped like
 * the real engine's rows (captures-v2 ws-question / ws-approval / ws-stream-enabled).
 */

import { simHas } from "../compat.ts";
import {
	assistantMessageIdFor,
	nativeRef,
	newId,
	nowIso,
	providerItemIdFor,
	providerNodeIdFor,
	providerSessionIdFor,
	type Row,
	runtimeRequestIdFor,
} from "../engine/rows.ts";
import { Cancelled } from "../engine/scheduler.ts";
import { editFile } from "../repo/workspace.ts";
import {
	addItem,
	put,
	type RunHandle,
	type RunKit,
	updateItem,
} from "../runs/run-rows.ts";
import { type ApprovalKind, asksApproval } from "./approval-policy.ts";
import { defaultOutput, withholdOutput } from "./command-output.ts";
import type {
	AgentIO,
	ApprovalExtra,
	RuntimeResponse,
	ToolOutcome,
} from "./script.ts";
import { startBackgroundTask } from "./wake-run.ts";

const APPROVED = new Set(["accept", "acceptForSession", "acceptAlways"]);

export function agentIO(
	kit: RunKit,
	h: RunHandle,
	step: () => Promise<void>,
): AgentIO {
	function messageRows(nativeId: string) {
		return {
			messageId: assistantMessageIdFor(h.instanceId, nativeId),
			itemId: providerItemIdFor(h.instanceId, nativeId),
			nodeId: providerNodeIdFor(h.instanceId, nativeId),
		};
	}
	function upsertAssistant(
		ids: ReturnType<typeof messageRows>,
		text: string,
		streaming: boolean,
		item: Row | null,
	): Row {
		const at = nowIso();
		const existing = kit.store.find(h.thread, "messages", ids.messageId);
		const message: Row = {
			createdBy: "agent",
			creationSource: "provider",
			id: ids.messageId,
			threadId: h.thread.id,
			runId: h.run.id,
			nodeId: ids.nodeId,
			role: "assistant",
			text,
			attachments: [],
			streaming,
			createdAt: existing?.createdAt ?? at,
			updatedAt: at,
		};
		put(kit, h, "messages", message, "message.updated", ids.nodeId);
		const fields = {
			status: streaming ? "running" : "completed",
			completedAt: streaming ? null : at,
			text,
			streaming,
		};
		if (item) return updateItem(kit, h, item, fields);
		return addItem(kit, h, {
			id: ids.itemId,
			nodeId: ids.nodeId,
			nativeItemRef: nativeRef(h.instanceId, ids.itemId.split(":").pop() ?? ""),
			...fields,
			type: "assistant_message",
			messageId: ids.messageId,
		});
	}
	/**
	 * A runtime request and the turn item that carries its details (none for `auth_refresh`;
	 * a `dynamic_tool` item on the same node for a client tool call). `capability`: how T3 can
	 * take the answer (live by default; `message`; `not_resumable` with its reason).
	 */
	async function request(
		kind: string,
		itemFields: Record<string, unknown> | null,
		viaMessage = false,
		capability?: Record<string, unknown>,
	): Promise<RuntimeResponse> {
		const callId = `call_${newId()}`;
		const requestId = runtimeRequestIdFor(
			h.instanceId,
			h.providerTurn?.id as string,
			callId,
		);
		const nodeId = providerNodeIdFor(h.instanceId, callId);
		const at = nowIso();
		const node: Row = {
			id: nodeId,
			threadId: h.thread.id,
			runId: h.run.id,
			parentNodeId: h.node.id,
			rootNodeId: h.node.id,
			kind: kind === "user_input" ? "user_input_request" : "approval_request",
			status: "waiting",
			countsForRun: false,
			providerThreadId: h.run.providerThreadId,
			providerTurnId: h.providerTurn?.id ?? null,
			nativeItemRef: nativeRef(h.instanceId, callId),
			runtimeRequestId: requestId,
			checkpointScopeId: null,
			startedAt: at,
			completedAt: null,
		};
		put(kit, h, "nodes", node, "node.updated", nodeId);
		const requestRow: Row = {
			id: requestId,
			nodeId,
			providerTurnId: h.providerTurn?.id ?? null,
			nativeRequestRef: nativeRef(h.instanceId, callId),
			kind,
			status: "pending",
			responseCapability:
				capability ??
				(viaMessage
					? { type: "message" }
					: {
							type: "live",
							providerSessionId: providerSessionIdFor(h.instanceId),
						}),
			createdAt: at,
			resolvedAt: null,
		};
		put(
			kit,
			h,
			"runtimeRequests",
			requestRow,
			"runtime-request.updated",
			nodeId,
		);
		if (itemFields)
			addItem(kit, h, {
				id: providerItemIdFor(h.instanceId, callId),
				nodeId,
				nativeItemRef: nativeRef(h.instanceId, callId),
				status: "waiting",
				completedAt: null,
				...(itemFields.type === "dynamic_tool" ? {} : { requestId }),
				...itemFields,
			});
		const response = await new Promise<RuntimeResponse>((resolve, reject) => {
			h.pending = { requestId, resolve };
			h.controller.signal.addEventListener(
				"abort",
				() => reject(new Cancelled()),
				{ once: true },
			);
		});
		h.pending = null;
		return response;
	}
	const approve = (
		requestKind: string,
		prompt: string,
		extra: ApprovalExtra = {},
	) => {
		const { capability, ...all } = extra;
		// The pre-release engine's approvals carry no options or app name (compat.ts).
		const { options, appName, ...rest } = all;
		const fields = simHas(kit.compat, "approvalOptions") ? all : rest;
		return request(
			requestKind,
			{ type: "approval_request", requestKind, prompt, ...fields },
			false,
			capability,
		);
	};
	/** Asks first when the thread's mode wants it (read at the call: a mode set mid-run counts). */
	async function gate(
		kind: ApprovalKind,
		prompt: string,
		extra?: ApprovalExtra,
	): Promise<ToolOutcome> {
		if (!asksApproval(h.thread.app.runtimeMode, kind)) return "run";
		const { decision } = await approve(kind, prompt, extra);
		const accepted = decision !== undefined && APPROVED.has(decision);
		await step();
		return accepted ? "approved" : "declined";
	}
	return {
		prompt: h.prompt,
		step,
		scope: { kit, handle: h },
		async say(text) {
			const ids = messageRows(`msg_${newId()}`);
			const node: Row = {
				...h.node,
				id: ids.nodeId,
				kind: "assistant_message",
				parentNodeId: h.node.id,
				countsForRun: false,
			};
			put(
				kit,
				h,
				"nodes",
				{ ...node, status: "completed", completedAt: nowIso() },
				"node.updated",
				ids.nodeId,
			);
			upsertAssistant(ids, text, false, null);
		},
		async stream(parts) {
			const ids = messageRows(`msg_${newId()}`);
			let text = "";
			let item: Row | null = null;
			for (const part of parts) {
				text += part;
				item = upsertAssistant(ids, text, true, item);
				await step();
			}
			upsertAssistant(ids, text, false, item);
		},
		async command(input, options = {}) {
			const outcome = await gate(
				"command",
				options.reason ?? `sim agent wants to run ${input}`,
				options.approval,
			);
			if (outcome === "declined") return outcome;
			const nativeId = `call_${newId()}`;
			const item = addItem(kit, h, {
				id: providerItemIdFor(h.instanceId, nativeId),
				nativeItemRef: nativeRef(h.instanceId, nativeId),
				status: "running",
				title: "Run command",
				completedAt: null,
				type: "command_execution",
				input,
			});
			await step();
			updateItem(kit, h, item, {
				status: "completed",
				exitCode: options.exitCode ?? 0,
				completedAt: nowIso(),
				...withholdOutput(
					kit.compat,
					h.thread,
					item.id,
					options.output ?? defaultOutput(input, options.exitCode ?? 0),
					options.exitCode ?? 0,
				),
			});
			return outcome;
		},
		async notice(message) {
			if (!simHas(kit.compat, "systemNotice")) return;
			addItem(kit, h, {
				id: providerItemIdFor(h.instanceId, `notice_${newId()}`),
				type: "system_notice",
				message,
			});
		},
		backgroundTask: (description) => {
			// The pre-release engine neither reports background work nor wakes a thread for it.
			if (simHas(kit.compat, "backgroundWork"))
				startBackgroundTask(kit, h, description);
		},
		async fileChange(fileName, additions, deletions) {
			const outcome = await gate(
				"file-change",
				`sim agent wants to edit ${fileName}`,
			);
			if (outcome === "declined") return outcome;
			const nativeId = `call_${newId()}`;
			addItem(kit, h, {
				id: providerItemIdFor(h.instanceId, nativeId),
				nativeItemRef: nativeRef(h.instanceId, nativeId),
				title: "Edit file",
				type: "file_change",
				fileName,
				additions,
				deletions,
			});
			const kind = editFile(
				h.thread,
				fileName,
				additions,
				deletions,
				h.run.ordinal as number,
			);
			h.files.push({ path: fileName, kind, additions, deletions });
			return outcome;
		},
		ask: (questions, options) =>
			options?.dismissable
				? request(
						"user_input",
						{ type: "user_input_request", questions, responseMode: "message" },
						true,
					)
				: request("user_input", { type: "user_input_request", questions }),
		approve,
		async signIn() {
			await request("auth_refresh", null);
		},
		async clientTool(toolName, input, capability) {
			await request(
				"dynamic_tool_call",
				{ type: "dynamic_tool", title: toolName, toolName, input },
				false,
				capability,
			);
		},
		steered: () => [...h.steers],
		hold() {
			if (h.finishRequested) return Promise.resolve();
			return new Promise<void>((resolve, reject) => {
				h.release = () => {
					h.release = null;
					resolve();
				};
				h.controller.signal.addEventListener(
					"abort",
					() => reject(new Cancelled()),
					{ once: true },
				);
			});
		},
	};
}
