/**
 * A message shown once above a page after an action (post, redirect, get): kept per session in
 * memory for a minute, so a reload never repeats the action and no notice text travels in a URL.
 */
export interface Notice {
	tone: "ok" | "info" | "error";
	text: string;
}

const KEEP_MS = 60_000;

export function createNotices(now: () => number) {
	const kept = new Map<string, { notice: Notice; at: number }>();
	return {
		set(session: string, notice: Notice): void {
			kept.delete(session);
			kept.set(session, { notice, at: now() });
			if (kept.size > 1_000) kept.delete(kept.keys().next().value as string);
		},
		take(session: string): Notice | undefined {
			const found = kept.get(session);
			kept.delete(session);
			return found && now() - found.at < KEEP_MS ? found.notice : undefined;
		},
	};
}

export type Notices = ReturnType<typeof createNotices>;
