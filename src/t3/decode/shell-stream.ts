/** Items of `orchestration.subscribeShell` (PROTOCOL.md §8.2). */
import type { ShellStreamItem } from "../model.ts";
import { num, requireId, str } from "./json.ts";
import { decodeKinded } from "./kinded.ts";
import {
	decodeProjectShell,
	decodeShellSnapshot,
	decodeThreadShell,
} from "./shell.ts";

/** One `subscribeShell` item (§8.2). Never throws: malformed items become `unknown`. */
export function decodeShellStreamItem(
	raw: unknown,
	onUnknown?: (kind: string) => void,
): ShellStreamItem {
	return decodeKinded<ShellStreamItem>(raw, onUnknown, (kind, raw) => {
		switch (kind) {
			case "snapshot": {
				const item: ShellStreamItem = {
					kind: "snapshot",
					snapshot: decodeShellSnapshot(raw.snapshot),
				};
				if (Array.isArray(raw.resolvedRepositoryIdentityRoots)) {
					item.resolvedRepositoryIdentityRoots =
						raw.resolvedRepositoryIdentityRoots.filter(
							(r): r is string => typeof r === "string",
						);
				}
				return item;
			}
			case "project.updated":
				return {
					kind,
					sequence: num(raw.sequence) ?? 0,
					project: decodeProjectShell(raw.project),
				};
			case "project.removed":
				return {
					kind,
					sequence: num(raw.sequence) ?? 0,
					projectId: requireId(raw, "project.removed", "projectId"),
				};
			case "thread.updated":
				return {
					kind,
					sequence: num(raw.sequence) ?? 0,
					location: str(raw.location) ?? "active",
					thread: decodeThreadShell(raw.thread),
				};
			case "thread.removed":
				return {
					kind,
					sequence: num(raw.sequence) ?? 0,
					location: str(raw.location) ?? "active",
					threadId: requireId(raw, "thread.removed", "threadId"),
				};
			case "synchronized":
				return { kind };
			default:
				return undefined;
		}
	});
}
