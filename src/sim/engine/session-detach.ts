/**
 * `provider-session.detach` (PROTOCOL.md §6.7): the session leaves the thread's projection with a
 * `provider-session.detached` event `{providerSessionId, detachedAt, reason}` (captures-v2
 * ws-detach-stream); the next run attaches a session again. History is untouched.
 */
import { nowIso } from "./rows.ts";
import type { Store, ThreadState } from "./store.ts";

/** Returns the event's sequence, or the refusal message. */
export function detachSession(
	store: Store,
	thread: ThreadState,
	sessionId: string,
	reason: string | undefined,
): number | string {
	const session = store.find(thread, "providerSessions", sessionId);
	if (!session) return `Provider session ${sessionId} was not found.`;
	const instanceId = String(session.providerInstanceId ?? "");
	return store.remove(
		thread,
		"providerSessions",
		sessionId,
		"provider-session.detached",
		{
			providerSessionId: sessionId,
			detachedAt: nowIso(),
			...(reason === undefined ? {} : { reason }),
		},
		{ driver: instanceId, providerInstanceId: instanceId },
	);
}
