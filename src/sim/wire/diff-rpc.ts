/**
 * `orchestration.getTurnDiff` and `orchestration.getFullThreadDiff` (PROTOCOL.md §5) over the
 * sim's workspace snapshots, with the real server's gaps: no diff from turn 0, none for a run
 * without a checkpoint (interrupted, failed, still going), as the `CheckpointRefUnavailableError`
 * of OBSERVED.md §5.8.
 */
import type { Outcome } from "../engine/engine.ts";
import type { Store } from "../engine/store.ts";
import { diffBetween } from "../repo/workspace.ts";

function turnCount(
	payload: Record<string, unknown>,
	key: string,
): number | string {
	const value = payload[key];
	if (value === undefined) return `Missing key\n  at ["${key}"]`;
	if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
		return `Expected a non-negative integer, got ${JSON.stringify(value)}\n  at ["${key}"]`;
	return value;
}

function failure(cause: { name: string; message: string }): Outcome {
	return {
		fail: {
			_tag: "OrchestrationGetTurnDiffError",
			message: "Failed to load turn diff",
			cause,
		},
	};
}

export function turnDiff(
	store: Store,
	payload: Record<string, unknown>,
	full: boolean,
): Outcome {
	if (typeof payload.threadId !== "string")
		return { die: 'Missing key\n  at ["threadId"]' };
	const threadId = payload.threadId;
	const to = turnCount(payload, "toTurnCount");
	if (typeof to === "string") return { die: to };
	const from = full ? 0 : turnCount(payload, "fromTurnCount");
	if (typeof from === "string") return { die: from };
	if (from > to)
		return {
			die: `Expected fromTurnCount to be less than or equal to toTurnCount, got ${from} > ${to}`,
		};
	const thread = store.threads.get(threadId);
	if (!thread || thread.app.deletedAt)
		return failure({
			name: "ProjectionStoreThreadNotFoundError",
			message: `Thread ${threadId} was not found.`,
		});
	const result = diffBetween(thread, from, to, full);
	if ("unavailable" in result) {
		const turn = result.unavailable;
		return failure({
			name: "CheckpointRefUnavailableError",
			message: `Checkpoint unavailable for thread ${threadId} turn ${turn}: Checkpoint ref is unavailable for turn ${turn}.`,
		});
	}
	// Key order as the capture's Success value (ws-extras.jsonl).
	return {
		ok: {
			fromTurnCount: from,
			toTurnCount: to,
			threadId,
			diff: result.diff,
		},
	};
}
