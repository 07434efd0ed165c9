/**
 * Approval links (CONTRACT.md "Approval links"): every approval pending on a thread within
 * `[approvals] link_client`'s reach, watched or not, gets one link and one `approval.requested`
 * event on the people hook; the request's end (answered anywhere, dismissed, the run ended)
 * settles the link and sends `approval.settled`. A POST on the link decides as `link_client`,
 * once. The config is read at each use: a reload that changes `[approvals]` kills the links.
 */
import type { ApprovalsConfig } from "../config/types.ts";
import type { FleetMachine } from "../fleet/fleet.ts";
import { servicesForClient } from "../rights/for-client.ts";
import type { Services } from "../services.ts";
import { pendingQuestion } from "../t3/derive/derive.ts";
import { questionKind, snakeDecision } from "../t3/derive/request-kinds.ts";
import type { PendingRuntimeRequest, ThreadShell } from "../t3/model.ts";
import { answer } from "../threads/control/answer.ts";
import { type Clock, systemClock } from "../util/clock.ts";
import { maskCredentials } from "../util/redact.ts";
import { type AnsweredBy, answeredBy } from "./answer-notes.ts";
import { createLinkStore, type LinkRow, type LinkStore } from "./link-store.ts";
import { linkView, requestedEvent, settledEvent } from "./people-events.ts";
import { createPeopleHook, type PeopleHook } from "./people-hook.ts";
import {
	linkUrl,
	looksLikeToken,
	newLinkToken,
	sha256Hex,
	tokenHash,
} from "./tokens.ts";

/** What a link shows now: the approval to decide, or why there is nothing to decide. */
export type LinkState =
	| { kind: "unknown" }
	| { kind: "dead"; link: LinkRow }
	| { kind: "expired"; link: LinkRow }
	| { kind: "open"; link: LinkRow; offered: LinkRow["view"]["decisions"] }
	| { kind: "deciding"; link: LinkRow }
	| { kind: "decided"; link: LinkRow }
	| { kind: "settled"; link: LinkRow };

/** What a POST did. */
export type DecideOutcome =
	| { kind: "sent"; link: LinkRow; decision: string }
	| { kind: "not_offered"; state: LinkState }
	| { kind: "taken"; state: LinkState }
	| { kind: "failed"; state: LinkState; offline: boolean; reason: string };

export interface Approvals {
	/** The people hook, when `[approvals]` was set at start. */
	hook: PeopleHook | null;
	links: LinkStore;
	state(token: string): LinkState;
	decide(token: string, decision: string): Promise<DecideOutcome>;
	start(): void;
	stop(): Promise<void>;
	/** Resolves when no link is being made (tests). */
	idle(): Promise<void>;
}

export interface ApprovalsOptions {
	clock?: Clock;
	fetch?: typeof fetch;
	retryScheduleS?: number[];
}

/** Names the `[approvals]` a link was made under: another one makes it dead. */
export function approvalsKey(approvals: ApprovalsConfig): string {
	const { linkClient, hookUrl, hookTokenEnv, linkTtlS, decisions } = approvals;
	return sha256Hex(
		JSON.stringify({
			linkClient,
			hookUrl,
			hookTokenEnv,
			linkTtlS,
			decisions,
		}),
	);
}

const isApproval = (request: PendingRuntimeRequest | null) =>
	request !== null && questionKind(request.kind) === "approval";

/** `services` is read lazily: the approvals are made while the services object is. */
export function createApprovals(
	getServices: () => Services,
	options: ApprovalsOptions = {},
): Approvals {
	const clock = options.clock ?? systemClock;
	let links: LinkStore | undefined;
	let hook: PeopleHook | null = null;
	/** What the hook was made for (its URL and bearer): another one after a reload, a new hook. */
	let hookKey: string | null = null;
	const retired = new Set<Promise<void>>();
	/** Requests with a link, or one being made: `thread\0request`. */
	const known = new Set<string>();
	/** Threads with links not settled yet. */
	const unsettled = new Map<string, Set<string>>();
	const making = new Set<Promise<void>>();
	let stopAttach: (() => void) | undefined;
	let stopped = false;
	const keyOf = (thread: string, request: string) =>
		`${thread}\u0000${request}`;

	const current = () => {
		const services = getServices();
		const approvals = services.config.approvals ?? null;
		const client =
			approvals === null
				? undefined
				: services.config.clients.find((c) => c.name === approvals.linkClient);
		return { services, approvals, client };
	};
	/**
	 * The people hook of the `[approvals]` in force: made anew when a reload changed its URL or
	 * bearer (the old worker stops; rows left pending go to the new address), none without it.
	 */
	const currentHook = (): PeopleHook | null => {
		const { services, approvals } = current();
		const key =
			approvals === null
				? null
				: `${approvals.hookUrl}\u0000${approvals.hookToken ?? ""}`;
		if (key === hookKey || stopped) return hook;
		if (hook) {
			const done = hook.delivery.stop();
			retired.add(done);
			void done.finally(() => retired.delete(done));
		}
		hookKey = key;
		hook =
			approvals === null
				? null
				: createPeopleHook(approvals, services.config.server, {
						db: services.db,
						clock,
						metrics: services.metrics,
						log: services.log,
						fetch: options.fetch,
						retryScheduleS: options.retryScheduleS,
					});
		hook?.delivery.start();
		return hook;
	};
	const store = () => {
		links ??= createLinkStore(getServices().db);
		return links;
	};

	const track = (thread: string, request: string) => {
		let set = unsettled.get(thread);
		if (!set) {
			set = new Set();
			unsettled.set(thread, set);
		}
		set.add(request);
	};

	/**
	 * The request ended: the link settles and `approval.settled` goes out, saying who answered
	 * when known (this link, or a client through the connector); answered in T3 itself, the
	 * decision T3 recorded on the request, read from the thread when the machine is at hand.
	 */
	const emitSettled = (
		link: Pick<LinkRow, "thread_id" | "request_id" | "created_at" | "machine">,
	) => {
		const { services } = current();
		const fresh = store().byRequest(link.thread_id, link.request_id);
		const how =
			fresh && (fresh.status === "deciding" || fresh.status === "decided")
				? {
						decision: fresh.decision,
						client: fresh.decided_by ?? current().approvals?.linkClient ?? null,
						via: "link" as const,
					}
				: answeredBy(
						services.db,
						link.thread_id,
						link.request_id,
						link.created_at,
					);
		unsettled.get(link.thread_id)?.delete(link.request_id);
		if (unsettled.get(link.thread_id)?.size === 0)
			unsettled.delete(link.thread_id);
		known.delete(keyOf(link.thread_id, link.request_id));
		const machine = services.fleet.get(link.machine)?.machine;
		if (how.client !== null || machine?.status().state !== "online") {
			finishSettled(link, how);
			return;
		}
		// Nothing may take the link meanwhile: it is settled now, its decision filled in after.
		store().settle(link.thread_id, link.request_id, how, clock.now());
		const job = machine
			.getThread(link.thread_id)
			.then(({ projection }) => {
				const row = projection.runtimeRequests.find(
					(r) => r.id === link.request_id,
				);
				return typeof row?.decision === "string" && row.status === "resolved"
					? snakeDecision(row.decision)
					: null;
			})
			.catch(() => null)
			.then((decision) => finishSettled(link, { ...how, decision }));
		making.add(job);
		void job.finally(() => making.delete(job));
	};

	const finishSettled = (
		link: Pick<LinkRow, "thread_id" | "request_id">,
		how: AnsweredBy,
	) => {
		store().settle(link.thread_id, link.request_id, how, clock.now());
		if (how.decision !== null)
			store().noteDecision(link.thread_id, link.request_id, how.decision);
		currentHook()?.emit(settledEvent(link, how, clock.now()));
	};

	/** Settles the thread's links whose request is no longer the pending one. */
	const settleGone = (threadId: string, pendingId: string | null) => {
		const requests = unsettled.get(threadId);
		if (!requests) return;
		for (const request of [...requests]) {
			if (request === pendingId) continue;
			const link = store().byRequest(threadId, request);
			if (link) emitSettled(link);
			else requests.delete(request);
		}
	};

	const makeLink = async (
		entry: FleetMachine,
		shell: ThreadShell,
		request: PendingRuntimeRequest,
	) => {
		const { services, approvals, client } = current();
		if (!approvals || !client || !currentHook()) return;
		const { config } = services;
		const publicUrl = config.server.publicUrl;
		if (publicUrl === undefined) return;
		const scoped = servicesForClient(services, client);
		// Within the link client's reach only (a machine or project outside it does not exist).
		const located = scoped.fleet.locate(shell.id);
		if (!located || located.entry.config.name !== entry.config.name) return;
		const { projection } = await entry.machine.getThread(shell.id);
		const question = pendingQuestion(projection, undefined, {
			machine: entry.config.name,
		});
		if (
			!question ||
			question.request_id !== request.id ||
			question.kind !== "approval" ||
			!question.answerable
		)
			return;
		const offered = (question.decisions ?? []).filter((d) =>
			approvals.decisions.includes(d.decision),
		);
		if (offered.length === 0 || stopped) return;
		const token = newLinkToken();
		const now = clock.now();
		const expires = now + approvals.linkTtlS * 1000;
		const record = services.threadDeps.threads.get(shell.id);
		const view = linkView(
			entry.config.name,
			located.project,
			shell,
			question,
			offered,
		);
		const made = services.db.transaction(() => {
			const inserted = store().insert({
				hash: tokenHash(token),
				thread: shell.id,
				machine: entry.config.name,
				request: request.id,
				config: approvalsKey(approvals),
				view,
				now,
				expires,
			});
			if (!inserted) return false;
			currentHook()?.emit(
				requestedEvent({
					view,
					threadId: shell.id,
					request,
					record,
					now,
					expires,
					url: linkUrl(publicUrl, token),
				}),
			);
			return true;
		})();
		if (made) track(shell.id, request.id);
		// The request may have ended while the link was being made.
		const after = entry.machine.thread(shell.id)?.pendingRuntimeRequest ?? null;
		if (after?.id !== request.id && entry.machine.status().state === "online")
			settleGone(shell.id, after?.id ?? null);
	};

	const consider = (entry: FleetMachine, shell: ThreadShell) => {
		const pending = shell.pendingRuntimeRequest ?? null;
		settleGone(shell.id, pending?.id ?? null);
		if (!pending || !isApproval(pending)) return;
		const key = keyOf(shell.id, pending.id);
		if (known.has(key)) return;
		known.add(key);
		if (store().byRequest(shell.id, pending.id)) return;
		const job = makeLink(entry, shell, pending).catch((error) => {
			// Tried again at the next change of the thread or the next reconnect.
			known.delete(key);
			getServices().log.warn("could not make an approval link", {
				machine: entry.config.name,
				thread: shell.id,
				error,
			});
		});
		making.add(job);
		void job.finally(() => making.delete(job));
	};

	const sweep = (entry: FleetMachine) => {
		for (const shell of entry.machine.threads()) consider(entry, shell);
		// Links of threads the shell no longer has (deleted, archived): their request ended.
		for (const link of store().unsettled()) {
			if (link.machine !== entry.config.name) continue;
			if (!entry.machine.thread(link.thread_id)) emitSettled(link);
		}
	};

	const state = (token: string): LinkState => {
		if (!looksLikeToken(token)) return { kind: "unknown" };
		const link = store().byHash(tokenHash(token));
		if (!link) return { kind: "unknown" };
		const { approvals, client } = current();
		if (
			!approvals ||
			!client?.approve ||
			link.config_key !== approvalsKey(approvals)
		)
			return { kind: "dead", link };
		if (link.status === "decided") return { kind: "decided", link };
		if (link.status === "deciding") return { kind: "deciding", link };
		if (link.status === "settled" || link.settled_at !== null)
			return { kind: "settled", link };
		if (link.expires_at <= clock.now()) return { kind: "expired", link };
		return {
			kind: "open",
			link,
			offered: link.view.decisions.filter((d) =>
				approvals.decisions.includes(d.decision),
			),
		};
	};

	const decide = async (
		token: string,
		decision: string,
	): Promise<DecideOutcome> => {
		const before = state(token);
		if (before.kind !== "open") return { kind: "taken", state: before };
		if (!before.offered.some((d) => d.decision === decision))
			return { kind: "not_offered", state: before };
		const { link } = before;
		const { services, client } = current();
		if (!client) return { kind: "taken", state: state(token) };
		if (!store().take(link.token_hash, decision, clock.now()))
			return { kind: "taken", state: state(token) };
		const scoped = servicesForClient(services, client);
		const audit = (result: string) =>
			services.audit.record({
				at: clock.now(),
				client: client.name,
				tool: "t3_answer",
				machine: link.machine,
				project_id: link.view.project.id,
				thread_id: link.thread_id,
				run_id: null,
				result,
				idempotency_key: link.request_id,
				detail: decision,
				via: "link",
			});
		try {
			await answer(scoped.threadDeps, {
				thread_id: link.thread_id,
				request_id: link.request_id,
				decision,
				by: { client: client.name, via: "link" },
			});
		} catch (error) {
			const entry = services.fleet.get(link.machine);
			const offline = entry?.machine.status().state !== "online";
			const reason = maskCredentials(
				error instanceof Error ? error.message : String(error),
			);
			audit(offline ? "machine_offline" : "error");
			if (offline) {
				store().giveBack(link.token_hash);
				return { kind: "failed", state: state(token), offline, reason };
			}
			// T3 says the request is no longer pending: it ended elsewhere.
			store().giveBack(link.token_hash);
			const shell = entry?.machine.thread(link.thread_id);
			if (shell && shell.pendingRuntimeRequest?.id !== link.request_id)
				emitSettled(link);
			return { kind: "failed", state: state(token), offline, reason };
		}
		store().decided(link.token_hash, client.name, clock.now());
		audit("ok");
		const fresh = store().byHash(link.token_hash) as LinkRow;
		return { kind: "sent", link: fresh, decision };
	};

	return {
		get hook() {
			return currentHook();
		},
		get links() {
			return store();
		},
		state,
		decide,
		start() {
			const services = getServices();
			currentHook();
			for (const link of store().unsettled()) {
				known.add(keyOf(link.thread_id, link.request_id));
				track(link.thread_id, link.request_id);
			}
			// Attached whatever the config says now: a reload may add `[approvals]`.
			stopAttach = services.fleet.forEachMachine((entry) =>
				entry.machine.onChange((change) => {
					if (stopped || entry.machine.status().state !== "online") return;
					if (!services.config.approvals && unsettled.size === 0) return;
					if (change.kind === "thread") consider(entry, change.thread);
					else if (change.kind === "thread.removed")
						settleGone(change.threadId, null);
					else if (change.kind === "synchronized") sweep(entry);
				}),
			);
			if (services.config.approvals)
				for (const entry of services.fleet.list())
					if (entry.machine.status().state === "online") sweep(entry);
		},
		async stop() {
			stopped = true;
			stopAttach?.();
			await Promise.allSettled([...making]);
			await Promise.allSettled([...retired]);
			await hook?.delivery.stop();
		},
		async idle() {
			while (making.size) await Promise.allSettled([...making]);
			await hook?.delivery.idle();
		},
	};
}
