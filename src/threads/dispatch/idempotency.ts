/**
 * Idempotency keys (CONTRACT.md "Idempotency"): a key names ONE operation per tool. The same key
 * with the same arguments returns the first result; with different arguments it is an error
 * naming the earlier operation and what differs; a key whose operation acted on a thread that is
 * now hidden is refused without details. Rows live in src/store/operations.ts.
 *
 * For a tool that changes something (t3_manage, t3_delete…), wrap the use case in `once`:
 *
 *   return once(deps, {
 *     tool: "t3_manage",
 *     key: args.idempotency_key,
 *     // every argument except the key, references resolved to ids (compared on reuse)
 *     args: { thread_id: args.thread_id, action: args.action, title: args.title },
 *     threadId: args.thread_id,
 *   }, async () => ({ threadId: args.thread_id, result: await doIt() }));
 *
 * - no key: runs.
 * - unused key: claims it, runs, stores the result. A failure frees the key again (nothing was
 *   done, so a corrected retry may use it).
 * - same key, same arguments: the stored result. A call with that key still running in this
 *   process is awaited first; one that stopped mid-way with its process is run again.
 * - same key, other arguments / hidden thread: ThreadError (see `checkReuse`).
 *
 * `t3_dispatch` uses the parts directly (`keyArgument`, `fingerprint`, `checkReuse`): it claims
 * its key in the transaction that records the dispatch, and a reuse re-sends the stored command.
 */
import type {
	OperationPlace,
	OperationRecord,
	OperationStore,
} from "../../store/operations.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";

export interface KeyedOperation {
	tool: string;
	key: string | undefined;
	/** Every argument except the key, with references resolved to ids. */
	args: Record<string, unknown>;
	/** The thread the operation acts on, when known before it runs. */
	threadId?: string;
	/** The argument name the caller used for the key (for messages); default `idempotency_key`. */
	keyName?: string;
}

/** The key and the name it came under: `idempotency_key`, or its older name `request_id`. */
export function keyArgument(args: {
	idempotency_key?: string;
	request_id?: string;
}): { key: string; name: string } | undefined {
	const { idempotency_key: key, request_id: older } = args;
	if (key !== undefined && older !== undefined && key !== older) {
		throw new ThreadError(
			`idempotency_key and request_id: both given and different ("${key}", "${older}"). request_id is the older name of idempotency_key: pass only idempotency_key.`,
		);
	}
	if (key !== undefined) return { key, name: "idempotency_key" };
	if (older !== undefined) return { key: older, name: "request_id" };
	return undefined;
}

/** Canonical JSON of the arguments: keys sorted at every level, undefined values left out. */
export function fingerprint(args: Record<string, unknown>): string {
	return JSON.stringify(canonical(args));
}

function canonical(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(canonical);
	if (value !== null && typeof value === "object") {
		const object = value as Record<string, unknown>;
		return Object.fromEntries(
			Object.keys(object)
				.sort()
				.filter((k) => object[k] !== undefined)
				.map((k) => [k, canonical(object[k])]),
		);
	}
	return value;
}

/**
 * The earlier operation under this key when its arguments match (undefined when the key is
 * unused); a ThreadError when they differ or when it acted on a thread now hidden.
 */
export function checkReuse(
	deps: Pick<ThreadDeps, "operations">,
	tool: string,
	key: string,
	args: string,
	keyName = "idempotency_key",
): OperationRecord | undefined {
	const earlier = deps.operations.get(tool, key);
	if (earlier === undefined) return undefined;
	if (earlier === "hidden") throw hiddenKeyError(keyName, key);
	if (earlier.args !== null && earlier.args !== args) {
		const what = earlier.thread_id ? ` of thread ${earlier.thread_id}` : "";
		throw new ThreadError(
			`${keyName} "${key}" was used for a ${tool}${what} at ${new Date(earlier.created_at).toISOString()} with different arguments (${differences(earlier.args, args)}). Repeat the earlier arguments exactly to get its result, or use a new key for a new operation.`,
		);
	}
	return earlier;
}

/** Says nothing about the earlier operation: its thread does not exist for this connector now. */
export function hiddenKeyError(keyName: string, key: string): ThreadError {
	return new ThreadError(
		`${keyName} "${key}" is already used and cannot be used again. Choose a new key for a new operation.`,
	);
}

/**
 * A key whose operation made or used a thread that T3 no longer has (deleted here or elsewhere):
 * the key stays bound to that thread, so only a new key makes another.
 */
export function goneKeyError(
	keyName: string,
	key: string,
	threadId: string,
): ThreadError {
	return new ThreadError(
		`${keyName} "${key}" was used for thread ${threadId}, which no longer exists (deleted); pass a new ${keyName} to create another.`,
	);
}

/** "prompt differs", "prompt and title differ", "model, prompt and title differ". */
function differences(before: string, now: string): string {
	const a = JSON.parse(before) as Record<string, unknown>;
	const b = JSON.parse(now) as Record<string, unknown>;
	const names = [...new Set([...Object.keys(a), ...Object.keys(b)])]
		.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
		.sort();
	if (names.length === 0) return "arguments differ";
	if (names.length === 1) return `${names[0]} differs`;
	return `${names.slice(0, -1).join(", ")} and ${names.at(-1)} differ`;
}

/** Operations under a key that run right now in this process, per store. */
const running = new WeakMap<OperationStore, Map<string, Promise<unknown>>>();

/** Runs `run` once per key (see the file header). */
export async function once<R>(
	deps: Pick<ThreadDeps, "operations" | "now">,
	op: KeyedOperation,
	/** `place`: where the thread lives, for a thread that may have no thread record. */
	run: () => Promise<{
		threadId: string | null;
		result: R;
		place?: OperationPlace;
	}>,
): Promise<R> {
	if (op.key === undefined) return (await run()).result;
	const key = op.key;
	const args = fingerprint(op.args);
	let flights = running.get(deps.operations);
	if (!flights) {
		flights = new Map();
		running.set(deps.operations, flights);
	}
	const id = `${op.tool}\u0000${key}`;
	for (;;) {
		const other = flights.get(id);
		if (other) {
			// Two calls at once: the second answers with the first one's outcome.
			await other.catch(() => {});
			continue;
		}
		const earlier = checkReuse(deps, op.tool, key, args, op.keyName);
		if (earlier?.result != null) return JSON.parse(earlier.result) as R;
		if (!earlier) {
			deps.operations.insert({
				tool: op.tool,
				key,
				args,
				thread_id: op.threadId ?? null,
				ref: null,
				created_at: deps.now(),
			});
		}
		const task = (async () => {
			try {
				const done = await run();
				deps.operations.complete(
					op.tool,
					key,
					done.threadId,
					done.result,
					done.place,
				);
				return done.result;
			} catch (error) {
				deps.operations.remove(op.tool, key);
				throw error;
			}
		})();
		flights.set(id, task);
		try {
			return await task;
		} finally {
			flights.delete(id);
		}
	}
}
