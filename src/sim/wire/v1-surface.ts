/**
 * What a V1 (protocol 1) server shows: enough of the old surface for a V2 client to notice
 * it is on the wrong server (PROTOCOL.md §1.4) — a V1 shell snapshot, on the socket and over
 * HTTP, and a dispatchCommand that dies on any V2 command.
 */
import type { SimContext } from "../context.ts";
import { OPERATE_SCOPE, READ_SCOPE } from "./auth.ts";
import type { Method } from "./rpc-methods.ts";

export function v1Shell(ctx: SimContext): Record<string, unknown> {
	return {
		snapshotSequence: ctx.store.head(),
		projects: [...ctx.store.projects.values()].map((p) => p.row),
		threads: [...ctx.store.threads.values()].map((t) => ({
			id: t.id,
			projectId: t.app.projectId,
			title: t.app.title,
			session: null,
			latestTurn: null,
			hasPendingApprovals: false,
			hasPendingUserInput: false,
		})),
	};
}

/** The V1-only methods, which go over the methods every protocol shares. */
export function v1Methods(ctx: SimContext): Record<string, Method> {
	return {
		"orchestration.subscribeShell": {
			scope: READ_SCOPE,
			stream: (_payload, push) => {
				push([{ kind: "snapshot", snapshot: v1Shell(ctx) }]);
				return () => {};
			},
		},
		"orchestration.dispatchCommand": {
			scope: OPERATE_SCOPE,
			call: () => ({
				die: 'Expected { readonly "type": "thread.turn.start", ... } | …',
			}),
		},
	};
}
