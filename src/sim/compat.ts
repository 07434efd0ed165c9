/**
 * Which T3 Code the simulator imitates. `current`: the newest protocol-2 contract (released
 * 0.1.x, RELEASED-0.1.md). `prerelease`: the July pre-release V2 engine (OBSERVED.md), which
 * lacks the features below and, like any Effect Schema decoder, drops command fields it does
 * not know without a word. A feature added to the simulator that the pre-release lacks gates on
 * `simHas(ctx.compat, feature)`, so every fallback in the connector can be tested against it.
 */
export type SimCompat = "current" | "prerelease";

export const SIM_COMPATS: readonly SimCompat[] = ["current", "prerelease"];

/** What the newest contract has and the pre-release does not (issue 17). */
export type SimFeature =
	| "deliveryIntent"
	| "getTurnItem"
	| "searchThreads"
	| "threadFork"
	| "attachments"
	| "projectCreate"
	| "queuedRunEdit"
	/** Failure class `usage_limit` with `resetAt`, and the shell's `lastErrorClass` / `usageLimitResetAt` / `limitRecovery`. */
	| "failureDetail"
	/** `approval_request.options` and `appName` (T3 #8058). */
	| "approvalOptions"
	| "generateTitle"
	| "preparedRunRetry"
	/** `system_notice` turn items (OBSERVED.md §6.5 item 25: not in the pre-release contract). */
	| "systemNotice"
	/** The shell's `pendingBackgroundTasks` and the `notification` wake runs T3 starts when they end (§6.5 items 14, 21). */
	| "backgroundWork"
	/** `subscribeThread.acceptBoundedSnapshot`: a window of the latest turns. */
	| "boundedSnapshot"
	/** `thread.pin` / `thread.unpin` and the shell's `pinnedAt` (OBSERVED.md §6.4 item 17). */
	| "threadPins"
	/** `thread.mark-unread` and the shell's `lastVisitedAt` (OBSERVED.md §6.4 item 17). */
	| "markUnread"
	/** Providers' `usageLimits` in `server.getConfig` and `providerStatuses` (USAGE-AND-QUEUES.md §1.1). */
	| "usageLimits";

export function simHas(compat: SimCompat, _feature: SimFeature): boolean {
	return compat === "current";
}

export function isSimCompat(value: string): value is SimCompat {
	return (SIM_COMPATS as readonly string[]).includes(value);
}
