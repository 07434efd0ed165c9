/** Items of `orchestration.subscribeThread` (PROTOCOL.md §8.3). */
import type { ThreadProjection } from "../model.ts";
import { num, record, str } from "./json.ts";
import { decodeKinded } from "./kinded.ts";
import { decodeThreadProjection } from "./projection.ts";

/** One domain event of `subscribeThread` (§8.3), payload left raw (decode by `type`). */
export interface ThreadEvent {
	id?: string;
	threadId?: string;
	runId?: string | null;
	type: string;
	occurredAt?: string;
	payload: unknown;
	[key: string]: unknown;
}

export type ThreadStreamItem =
	| {
			kind: "snapshot";
			snapshotSequence: number;
			projection: ThreadProjection;
			hasMoreHistory?: boolean;
	  }
	| { kind: "event"; sequence: number; event: ThreadEvent }
	| { kind: "synchronized" }
	| { kind: "unknown"; raw: unknown };

export function decodeThreadStreamItem(
	raw: unknown,
	onUnknown?: (kind: string) => void,
): ThreadStreamItem {
	return decodeKinded<ThreadStreamItem>(raw, onUnknown, (kind, raw) => {
		switch (kind) {
			case "snapshot": {
				const item: ThreadStreamItem = {
					kind,
					snapshotSequence: num(raw.snapshotSequence) ?? 0,
					projection: decodeThreadProjection(raw.projection),
				};
				if (typeof raw.hasMoreHistory === "boolean")
					item.hasMoreHistory = raw.hasMoreHistory;
				return item;
			}
			case "event": {
				const ev = record(raw.event, "thread event");
				return {
					kind,
					sequence: num(raw.sequence) ?? 0,
					event: {
						...ev,
						type: str(ev.type) ?? "unknown",
						payload: ev.payload,
					},
				};
			}
			case "synchronized":
				return { kind };
			default:
				return undefined;
		}
	});
}
