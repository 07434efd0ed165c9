/**
 * Lenient decoders from parsed JSON to the read models in model.ts (PROTOCOL.md §7–§8).
 * Both the released protocol-2 shapes and the pre-release shapes in captures-v2 decode:
 * unknown keys are kept on the object, unknown enum members stay plain strings, optional
 * fields may be absent. Only a missing id makes an object unusable (T3Error BAD_RESPONSE).
 */
import type { Logger } from "../util/log.ts";
import { threadActivity } from "./derive.ts";
import { T3Error } from "./machine-api.ts";
import type {
	AuthSession,
	ConversationMessage,
	EnvironmentDescriptor,
	LaunchThreadResult,
	ModelSelection,
	PendingRuntimeRequest,
	ProjectShell,
	ProviderSession,
	Run,
	RuntimeRequest,
	ShellSnapshot,
	ShellStreamItem,
	ThreadDetail,
	ThreadProjection,
	ThreadShell,
	TurnItem,
	UserInputQuestion,
} from "./model.ts";

type Json = Record<string, unknown>;

/** A JSON object (not null, not an array): the shape every decoder checks first. */
export function isRecord(value: unknown): value is Json {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
	return typeof value === "string" ? value : undefined;
}

function strOrNull(value: unknown): string | null {
	return typeof value === "string" ? value : null;
}

function num(value: unknown): number | undefined {
	return typeof value === "number" && Number.isFinite(value)
		? value
		: undefined;
}

function arr(value: unknown): unknown[] {
	return Array.isArray(value) ? value : [];
}

function bad(what: string, raw: unknown): T3Error {
	return new T3Error("BAD_RESPONSE", `malformed ${what} from the T3 server`, {
		raw,
	});
}

function record(raw: unknown, what: string): Json {
	if (!isRecord(raw)) throw bad(what, raw);
	return raw;
}

function requireId(obj: Json, what: string, key = "id"): string {
	const id = obj[key];
	if (typeof id === "string" && id.length > 0) return id;
	if (typeof id === "number") return String(id);
	throw new T3Error(
		"BAD_RESPONSE",
		`${what} without ${key} from the T3 server`,
		{ raw: obj },
	);
}

/** Decode every element, skipping (and reporting) the ones that fail instead of failing all. */
function list<T>(
	value: unknown,
	decode: (raw: unknown) => T,
	onBad?: (err: unknown) => void,
): T[] {
	const out: T[] = [];
	for (const raw of arr(value)) {
		try {
			out.push(decode(raw));
		} catch (err) {
			onBad?.(err);
		}
	}
	return out;
}

export function decodeModelSelection(raw: unknown): ModelSelection | null {
	if (!isRecord(raw)) return null;
	// Legacy `{provider, model}` is promoted to instanceId (PROTOCOL.md §9).
	const instanceId = str(raw.instanceId) ?? str(raw.provider) ?? "";
	const model = str(raw.model) ?? "";
	const out: ModelSelection = { ...raw, instanceId, model };
	if (Array.isArray(raw.options)) {
		out.options = raw.options.filter(
			(o): o is { id: string; value: string | boolean } =>
				isRecord(o) &&
				typeof o.id === "string" &&
				(typeof o.value === "string" || typeof o.value === "boolean"),
		);
	} else if (isRecord(raw.options)) {
		out.options = Object.entries(raw.options)
			.filter(([, v]) => typeof v === "string" || typeof v === "boolean")
			.map(([id, value]) => ({ id, value: value as string | boolean }));
	} else {
		delete out.options;
	}
	return out;
}

export function decodeProjectShell(raw: unknown): ProjectShell {
	const obj = record(raw, "project");
	return {
		...obj,
		id: requireId(obj, "project"),
		title: str(obj.title) ?? "",
		workspaceRoot: str(obj.workspaceRoot) ?? "",
		defaultModelSelection: decodeModelSelection(obj.defaultModelSelection),
	};
}

function decodePending(raw: unknown): PendingRuntimeRequest | null {
	if (!isRecord(raw) || typeof raw.id !== "string") return null;
	const out: PendingRuntimeRequest = {
		...raw,
		id: raw.id,
		kind: str(raw.kind) ?? "unknown",
	};
	return out;
}

/**
 * A thread shell (§7.2). Also used for the projection's `thread` (an AppThread without the
 * activity summary): missing activity fields default to "no run, idle", and
 * `decodeThreadProjection` then derives them from the projection's rows.
 */
export function decodeThreadShell(raw: unknown): ThreadShell {
	const obj = record(raw, "thread");
	const lvm = obj.latestVisibleMessage;
	return {
		...obj,
		id: requireId(obj, "thread"),
		projectId: str(obj.projectId) ?? "",
		title: str(obj.title) ?? "",
		modelSelection: decodeModelSelection(obj.modelSelection),
		latestRunId: strOrNull(obj.latestRunId),
		activeRunId: strOrNull(obj.activeRunId),
		status: str(obj.status) ?? "idle",
		pendingRuntimeRequest: decodePending(obj.pendingRuntimeRequest),
		latestVisibleMessage:
			isRecord(lvm) && typeof lvm.id === "string"
				? {
						...lvm,
						id: lvm.id,
						role: str(lvm.role) ?? "unknown",
						text: str(lvm.text) ?? "",
					}
				: null,
	};
}

/** The thread-shell fields the connector reads; everything else stays on the wire. */
const SHELL_FIELDS = [
	"id",
	"projectId",
	"title",
	"providerInstanceId",
	"modelSelection",
	"runtimeMode",
	"interactionMode",
	"latestRunId",
	"activeRunId",
	"status",
	"pendingRuntimeRequest",
	"latestUserMessageAt",
	"lastError",
	"createdAt",
	"updatedAt",
	"archivedAt",
	"deletedAt",
] as const;
const HELD_MESSAGE_CHARS = 500;

/**
 * A thread shell trimmed for holding in memory for every thread of every machine: a newer
 * server's extra fields and a long latest message would otherwise be kept thousands of times.
 */
export function compactThreadShell(thread: ThreadShell): ThreadShell {
	const out: Record<string, unknown> = {};
	for (const key of SHELL_FIELDS)
		if (thread[key] !== undefined) out[key] = thread[key];
	const message = thread.latestVisibleMessage;
	out.latestVisibleMessage = message
		? {
				id: message.id,
				role: message.role,
				text: message.text.slice(0, HELD_MESSAGE_CHARS),
				updatedAt: message.updatedAt,
			}
		: null;
	return out as ThreadShell;
}

/** How the thread-shell fields that are not plain pass-through values decode (§7.2). */
const SHELL_DECODERS: Partial<
	Record<(typeof SHELL_FIELDS)[number], (obj: Json) => unknown>
> = {
	id: (obj) => requireId(obj, "thread"),
	projectId: (obj) => str(obj.projectId) ?? "",
	title: (obj) => str(obj.title) ?? "",
	modelSelection: (obj) => decodeModelSelection(obj.modelSelection),
	latestRunId: (obj) => strOrNull(obj.latestRunId),
	activeRunId: (obj) => strOrNull(obj.activeRunId),
	status: (obj) => str(obj.status) ?? "idle",
	pendingRuntimeRequest: (obj) => decodePending(obj.pendingRuntimeRequest),
};

/**
 * `compactThreadShell(decodeThreadShell(raw))` without the full copy in between: a snapshot
 * decodes thousands of threads at once, and every full copy is garbage a moment later.
 */
export function decodeHeldThreadShell(raw: unknown): ThreadShell {
	const obj = record(raw, "thread");
	const out: Record<string, unknown> = {};
	for (const key of SHELL_FIELDS) {
		const decode = SHELL_DECODERS[key];
		const value = decode ? decode(obj) : obj[key];
		if (value !== undefined) out[key] = value;
	}
	const lvm = obj.latestVisibleMessage;
	out.latestVisibleMessage =
		isRecord(lvm) && typeof lvm.id === "string"
			? {
					id: lvm.id,
					role: str(lvm.role) ?? "unknown",
					text: (str(lvm.text) ?? "").slice(0, HELD_MESSAGE_CHARS),
					updatedAt: lvm.updatedAt,
				}
			: null;
	return out as ThreadShell;
}

/**
 * A shell snapshot (§7). Its threads come as held (`decodeHeldThreadShell`): the only use of a
 * snapshot is to replace the threads held in memory, and it lists every thread of a machine.
 */
export function decodeShellSnapshot(raw: unknown): ShellSnapshot {
	const obj = record(raw, "shell snapshot");
	return {
		...obj,
		snapshotSequence: num(obj.snapshotSequence) ?? 0,
		projects: list(obj.projects, decodeProjectShell),
		threads: list(obj.threads, decodeHeldThreadShell),
		archivedThreads: list(obj.archivedThreads, decodeHeldThreadShell),
	};
}

/** Logs an unknown `kind` once per kind, so a chatty newer server does not flood the log. */
export function createUnknownKindReporter(
	log: Logger,
	what: string,
): (kind: string) => void {
	const seen = new Set<string>();
	return (kind) => {
		if (seen.has(kind)) return;
		seen.add(kind);
		log.warn(`ignoring unknown ${what} kind`, { kind });
	};
}

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

/**
 * The common frame of a stream item decoder: an object with a `kind`, decoded by `decode`;
 * an unknown kind (undefined from `decode`) or a malformed item becomes `{kind: "unknown"}`
 * and is reported, never thrown.
 */
function decodeKinded<T>(
	raw: unknown,
	onUnknown: ((kind: string) => void) | undefined,
	decode: (kind: string, raw: Record<string, unknown>) => T | undefined,
): T | { kind: "unknown"; raw: unknown } {
	const unknown = (kind: string) => {
		onUnknown?.(kind);
		return { kind: "unknown" as const, raw };
	};
	if (!isRecord(raw)) return unknown("<not an object>");
	const kind = str(raw.kind) ?? "<missing>";
	try {
		return decode(kind, raw) ?? unknown(kind);
	} catch {
		return unknown(`malformed ${kind}`);
	}
}

export function decodeRun(raw: unknown): Run {
	const obj = record(raw, "run");
	return {
		...obj,
		id: requireId(obj, "run"),
		threadId: str(obj.threadId) ?? "",
		ordinal: num(obj.ordinal) ?? 0,
		userMessageId: strOrNull(obj.userMessageId),
		status: str(obj.status) ?? "unknown",
		requestedAt: strOrNull(obj.requestedAt),
		startedAt: strOrNull(obj.startedAt),
		completedAt: strOrNull(obj.completedAt),
		modelSelection: decodeModelSelection(obj.modelSelection),
		queueHeld: obj.queueHeld === true,
	};
}

export function decodeMessage(raw: unknown): ConversationMessage {
	const obj = record(raw, "message");
	const out: ConversationMessage = {
		...obj,
		id: requireId(obj, "message"),
		runId: strOrNull(obj.runId),
		role: str(obj.role) ?? "unknown",
		text: str(obj.text) ?? "",
	};
	if (typeof obj.streaming !== "boolean") delete out.streaming;
	return out;
}

function decodeQuestion(raw: unknown, index: number): UserInputQuestion {
	const obj = isRecord(raw) ? raw : {};
	const options = arr(obj.options)
		.filter(isRecord)
		.map((o) => {
			const label = str(o.label) ?? str(o.value) ?? "";
			const opt: { label: string; description?: string; value?: string } = {
				...o,
				label,
			};
			if (typeof o.description !== "string") delete opt.description;
			if (typeof o.value !== "string") delete opt.value;
			return opt;
		});
	const q: UserInputQuestion = {
		...obj,
		id: str(obj.id) ?? String(index),
		question: str(obj.question) ?? str(obj.text) ?? "",
		options,
	};
	if (typeof obj.header !== "string") delete q.header;
	for (const key of ["multiSelect", "allowCustomAnswer", "required"] as const) {
		if (typeof obj[key] !== "boolean") delete q[key];
	}
	return q;
}

export function decodeTurnItem(raw: unknown): TurnItem {
	const obj = record(raw, "turn item");
	const item: TurnItem = {
		...obj,
		id: requireId(obj, "turn item"),
		type: str(obj.type) ?? "unknown",
		runId: strOrNull(obj.runId),
	};
	if (Array.isArray(obj.questions))
		item.questions = obj.questions.map(decodeQuestion);
	if (obj.options !== undefined && !Array.isArray(obj.options))
		delete item.options;
	if (obj.files !== undefined && !Array.isArray(obj.files)) delete item.files;
	if (
		obj.failure !== undefined &&
		obj.failure !== null &&
		!isRecord(obj.failure)
	)
		delete item.failure;
	return item;
}

export function decodeRuntimeRequest(raw: unknown): RuntimeRequest {
	const obj = record(raw, "runtime request");
	return {
		...obj,
		id: requireId(obj, "runtime request"),
		kind: str(obj.kind) ?? "unknown",
		status: str(obj.status) ?? "unknown",
	};
}

function decodeProviderSession(raw: unknown): ProviderSession {
	const obj = record(raw, "provider session");
	return { ...obj, id: requireId(obj, "provider session") };
}

export function decodeThreadProjection(raw: unknown): ThreadProjection {
	const obj = record(raw, "thread projection");
	const projection: ThreadProjection = {
		...obj,
		thread: decodeThreadShell(obj.thread),
		runs: list(obj.runs, decodeRun),
		messages: list(obj.messages, decodeMessage),
		turnItems: list(obj.turnItems, decodeTurnItem),
		runtimeRequests: list(obj.runtimeRequests, decodeRuntimeRequest),
		providerSessions: list(obj.providerSessions, decodeProviderSession),
	};
	// The projection's thread is an AppThread without the shell's activity summary (OBSERVED.md
	// §6.5): derived from the rows as the shell's is, it never reads "idle" beside its runs.
	if (!isRecord(obj.thread) || typeof obj.thread.status !== "string") {
		const { turnItems } = projection;
		Object.assign(
			projection.thread,
			threadActivity(projection.runs, projection.runtimeRequests, (id) =>
				turnItems.some((i) => i.requestId === id),
			),
		);
	}
	return projection;
}

export function decodeThreadDetail(raw: unknown): ThreadDetail {
	const obj = record(raw, "thread detail");
	return {
		...obj,
		snapshotSequence: num(obj.snapshotSequence) ?? 0,
		projection: decodeThreadProjection(obj.projection),
	};
}

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

export function decodeDescriptor(raw: unknown): EnvironmentDescriptor {
	const obj = record(raw, "environment descriptor");
	const out: EnvironmentDescriptor = { ...obj };
	if (typeof obj.serverVersion !== "string") delete out.serverVersion;
	// Absent on servers that predate negotiation: that means protocol 1 (PROTOCOL.md §1.1).
	if (typeof obj.orchestrationProtocolVersion !== "number")
		delete out.orchestrationProtocolVersion;
	return out;
}

export function decodeAuthSession(raw: unknown): AuthSession {
	const obj = record(raw, "auth session");
	const out: AuthSession = {
		...obj,
		authenticated: obj.authenticated === true,
	};
	if (Array.isArray(obj.scopes))
		out.scopes = obj.scopes.filter((s): s is string => typeof s === "string");
	else delete out.scopes;
	return out;
}

export function decodeTicket(raw: unknown): {
	ticket: string;
	expiresAt: string | null;
} {
	const obj = record(raw, "websocket ticket");
	const ticket = str(obj.ticket);
	if (!ticket) throw bad("websocket ticket", "<ticket missing>");
	return { ticket, expiresAt: strOrNull(obj.expiresAt) };
}

export function decodeLaunchResult(raw: unknown): LaunchThreadResult {
	const obj = record(raw, "launchThread result");
	return {
		...obj,
		threadId: requireId(obj, "launchThread result", "threadId"),
		projection: decodeThreadProjection(obj.projection),
		resumed: obj.resumed === true,
	};
}
