/**
 * The RPC methods a `/ws` connection answers, by tag (PROTOCOL.md §4, §5): the scope each
 * needs, and the call (one Exit) or stream (Chunks until interrupted) behind it. What a server
 * offers depends on its protocol and compat (PROTOCOL.md §1.4, §4.5).
 */
import { simHas } from "../compat.ts";
import type { SimContext } from "../context.ts";
import type { Outcome } from "../engine/engine.ts";
import { OPERATE_SCOPE, READ_SCOPE } from "./auth.ts";
import { openConfigStream } from "./config-stream.ts";
import { turnDiff } from "./diff-rpc.ts";
import { searchThreads } from "./search-threads.ts";
import { serverConfig } from "./server-config.ts";
import { openShellStream } from "./shell-stream.ts";
import { openThreadStream } from "./thread-stream.ts";
import { getTurnItem } from "./turn-item-rpc.ts";
import { v1Methods } from "./v1-surface.ts";

export type Push = (values: unknown[]) => void;
export interface Method {
	scope: string;
	call?: (payload: Record<string, unknown>) => Outcome;
	stream?: (
		payload: Record<string, unknown>,
		push: Push,
	) => Outcome | (() => void);
}

function cursorDefect(payload: Record<string, unknown>): string | undefined {
	const after = payload.afterSequence;
	if (after === undefined) return undefined;
	if (typeof after !== "number" || !Number.isInteger(after))
		return `Expected an integer, got ${JSON.stringify(after)}\n  at ["afterSequence"]`;
	if (after < 0)
		return `Expected a value greater than or equal to 0, got ${after}\n  at ["afterSequence"]`;
	return undefined;
}

/** The `refuseNextCommand` fault: a typed refusal, the command never runs. */
function refusedFault(
	ctx: SimContext,
	c: Record<string, unknown>,
): Outcome | undefined {
	const type = String(c.type);
	const left = ctx.faults.refuseCommands.get(type) ?? 0;
	if (left === 0) return undefined;
	ctx.faults.refuseCommands.set(type, left - 1);
	const message = `Command ${type} was refused (simulated fault).`;
	return {
		fail: {
			_tag: "OrchestrationV2DispatchCommandError",
			commandId: String(c.commandId),
			commandType: type,
			message,
			detail: message,
		},
	};
}

export function methodsFor(ctx: SimContext): Record<string, Method> {
	const common: Record<string, Method> = {
		"server.getConfig": {
			scope: READ_SCOPE,
			call: () => ({ ok: serverConfig(ctx) }),
		},
		"server.probe": { scope: READ_SCOPE, call: () => ({ ok: {} }) },
		subscribeServerConfig: {
			scope: READ_SCOPE,
			stream: (_payload, push) => openConfigStream(ctx, push),
		},
	};
	// Enough V1 surface for a V2 client to notice it is on the wrong server (PROTOCOL.md §1.4).
	if (ctx.protocol === 1) return { ...common, ...v1Methods(ctx) };
	// What the pre-release engine lacks answers as any unknown tag does (PROTOCOL.md §4.5).
	const newer: Record<string, Method> = {};
	if (simHas(ctx.compat, "searchThreads"))
		newer["orchestration.searchThreads"] = {
			scope: READ_SCOPE,
			call: (p) => searchThreads(ctx.store, p),
		};
	if (simHas(ctx.compat, "projectCreate"))
		newer["projects.mutate"] = {
			scope: OPERATE_SCOPE,
			call: (p) => ctx.projectMutations.mutate(p),
		};
	if (simHas(ctx.compat, "attachments"))
		newer["assets.persistChatAttachments"] = {
			scope: OPERATE_SCOPE,
			call: (p) => ctx.attachments.persist(p),
		};
	return {
		...common,
		...newer,
		"orchestration.dispatchCommand": {
			scope: OPERATE_SCOPE,
			call: (p) => refusedFault(ctx, p) ?? ctx.engine.dispatch(p),
		},
		"orchestration.launchThread": {
			scope: OPERATE_SCOPE,
			call: (p) => ctx.engine.launch(p),
		},
		"orchestration.getThreadProjection": {
			scope: READ_SCOPE,
			call: (p) =>
				typeof p.threadId === "string"
					? ctx.engine.getProjection(p.threadId)
					: { die: 'Missing key\n  at ["threadId"]' },
		},
		"orchestration.getArchivedShellSnapshot": {
			scope: READ_SCOPE,
			call: () => {
				const archived = [...ctx.store.threads.values()].filter(
					(t) => t.app.archivedAt && !t.app.deletedAt,
				);
				return {
					ok: {
						schemaVersion: 2,
						snapshotSequence: ctx.store.head(),
						projects: [...ctx.store.projects.values()].map((p) => p.row),
						threads: archived.map((t) => ctx.store.threadShell(t)),
					},
				};
			},
		},
		"orchestration.getTurnDiff": {
			scope: READ_SCOPE,
			call: (p) => turnDiff(ctx.store, p, false),
		},
		"orchestration.getFullThreadDiff": {
			scope: READ_SCOPE,
			call: (p) => turnDiff(ctx.store, p, true),
		},
		"orchestration.subscribeShell": {
			scope: READ_SCOPE,
			stream: (p, push) => {
				const defect = cursorDefect(p);
				if (defect) return { die: defect };
				return openShellStream(ctx, p, push);
			},
		},
		// Newer servers only: the pre-release dies on the unknown tag.
		...(simHas(ctx.compat, "getTurnItem")
			? {
					"orchestration.getTurnItem": {
						scope: READ_SCOPE,
						call: (p: Record<string, unknown>) => getTurnItem(ctx.store, p),
					},
				}
			: {}),
		"orchestration.subscribeThread": {
			scope: READ_SCOPE,
			stream: (p, push) => {
				if (typeof p.threadId !== "string")
					return { die: 'Missing key\n  at ["threadId"]' };
				const defect = cursorDefect(p);
				if (defect) return { die: defect };
				return openThreadStream(ctx, { ...p, threadId: p.threadId }, push);
			},
		},
	};
}
