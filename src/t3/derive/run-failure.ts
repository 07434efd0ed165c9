/**
 * Why a run failed, as released T3 0.1.x says it (idx 70102248590: `OrchestrationV2ProviderFailure`,
 * shell `lastErrorClass` / `usageLimitResetAt` / `limitRecovery`): its failure class, when a usage
 * limit resets, and whether T3 resumes the run by itself. A pre-release server says less: its
 * `error` items still carry a class, its shells none.
 */

import type { ThreadProjection, ThreadShell } from "../model.ts";
import { currentErrorItems } from "./current-errors.ts";

export const ERROR_CLASSES = [
	"usage_limit",
	"provider_error",
	"transport_error",
	"permission_error",
	"validation_error",
	"workspace_preparation",
	"unknown",
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export interface RunFailure {
	error_class: ErrorClass | null;
	reset_at: string | null;
	auto_resume: boolean;
}

export const NO_FAILURE: RunFailure = {
	error_class: null,
	reset_at: null,
	auto_resume: false,
};

/** The failure code of the `error` item a failed workspace preparation leaves. */
const PREPARATION_FAILED = "workspace_preparation_failed";
const KNOWN: ReadonlySet<string> = new Set(ERROR_CLASSES);

/** T3's class as ours: a class this connector does not know yet is `unknown`. */
function classOf(value: unknown): ErrorClass | null {
	if (typeof value !== "string" || value.length === 0) return null;
	return KNOWN.has(value) ? (value as ErrorClass) : "unknown";
}

function isoOrNull(value: unknown): string | null {
	return typeof value === "string" && !Number.isNaN(Date.parse(value))
		? value
		: null;
}

interface LimitRecovery {
	runId?: unknown;
	resetAt?: unknown;
	autoResume?: unknown;
}

function limitRecoveryOf(
	...holders: ({ limitRecovery?: unknown } | undefined)[]
): LimitRecovery | null {
	for (const holder of holders) {
		const value = holder?.limitRecovery;
		if (typeof value === "object" && value !== null)
			return value as LimitRecovery;
	}
	return null;
}

/**
 * The failure of run `runId` (call it for failed runs): its current `error` item's class
 * (current-errors.ts: not one an earlier attempt left; a failed
 * workspace preparation by its code), else the shell's `lastErrorClass`, else `unknown`.
 */
export function runFailure(
	projection: ThreadProjection,
	runId: string,
	shell?: ThreadShell,
): RunFailure {
	const failure = currentErrorItems(projection, runId)[0]?.failure ?? null;
	const thread = shell ?? projection.thread;
	const latest = thread.latestRunId === runId || thread.latestRunId == null;
	const errorClass =
		failure?.code === PREPARATION_FAILED
			? "workspace_preparation"
			: (classOf(failure?.class) ??
				(latest ? classOf(thread.lastErrorClass) : null) ??
				"unknown");
	const recovery = limitRecoveryOf(projection.thread, shell);
	const ours =
		recovery !== null &&
		(recovery.runId === undefined || recovery.runId === runId);
	const resetAt =
		errorClass !== "usage_limit"
			? null
			: (isoOrNull((failure as { resetAt?: unknown } | null)?.resetAt) ??
				(ours ? isoOrNull(recovery?.resetAt) : null) ??
				(latest ? isoOrNull(thread.usageLimitResetAt) : null));
	return {
		error_class: errorClass,
		reset_at: resetAt,
		auto_resume: ours && recovery?.autoResume === true,
	};
}

/** A listed thread's failure from its shell alone: set only while its latest run is failed. */
export function shellFailure(shell: ThreadShell): RunFailure {
	if (shell.status !== "failed") return NO_FAILURE;
	const errorClass = classOf(shell.lastErrorClass) ?? "unknown";
	const recovery = limitRecoveryOf(shell);
	const ours =
		recovery !== null &&
		(recovery.runId === undefined || recovery.runId === shell.latestRunId);
	return {
		error_class: errorClass,
		reset_at:
			errorClass === "usage_limit"
				? (isoOrNull(shell.usageLimitResetAt) ??
					(ours ? isoOrNull(recovery?.resetAt) : null))
				: null,
		auto_resume: ours && recovery?.autoResume === true,
	};
}
