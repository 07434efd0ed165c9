/** The `/healthz` JSON (CONTRACT.md "HTTP") and the `/metrics` gauges; both read memory and one indexed query. */
import type { Services } from "../services.ts";
import { outboxStats } from "../store/outbox-stats.ts";
import { activeWaits } from "../threads/wait/wait.ts";
import { maskDeep, redact } from "../util/redact.ts";

/** What anyone who can reach `/healthz` sees when `T3CODE_MCP_TOKEN` is set and not sent. */
export function publicHealth(services: Services) {
	const storageError = services.writeProbe.check(services.threadDeps.now());
	return {
		status: storageError ? "degraded" : "ok",
		version: services.version,
	};
}

export function healthReport(services: Services) {
	const machines: Record<
		string,
		{
			state: string;
			reason?: string;
			last_event_at?: string;
			token_expires_at: string | null;
		}
	> = {};
	for (const entry of services.fleet.list()) {
		const status = entry.machine.status();
		machines[entry.config.name] = {
			state: status.state,
			...(status.reason ? { reason: redact(status.reason) } : {}),
			...(status.lastEventAt
				? { last_event_at: new Date(status.lastEventAt).toISOString() }
				: {}),
			token_expires_at: status.tokenExpiresAt ?? null,
		};
	}
	const now = services.threadDeps.now();
	const stats = outboxStats(services.db, now);
	const storageError = services.writeProbe.check(now);
	// This process's latest delivery failure; after a restart, the newest one on a row.
	const lastError = services.events.delivery.lastError() ?? stats.lastError;
	// The safety net over every field (a storage error quotes sqlite, which may quote a path).
	return maskDeep({
		// Still 200: the process serves; "degraded" says the state cannot be written right now.
		status: storageError ? "degraded" : "ok",
		version: services.version,
		machines,
		outbox: {
			pending: stats.pending,
			oldest_pending_s: stats.oldestPendingS,
			held: stats.held,
			dead: stats.dead,
			// Rows written before redaction existed are made safe here too.
			...(lastError ? { last_error: redact(lastError) } : {}),
		},
		hook: services.config.server.hookUrl ? "configured" : "not configured",
		// The approvals hook's own outbox (src/approvals): its links reach people, not agents.
		...(services.config.approvals
			? { people_outbox: peopleOutbox(services, now) }
			: {}),
		...(storageError
			? {
					storage: {
						error: `cannot write ${services.config.server.statePath}: ${storageError}`,
					},
				}
			: {}),
	});
}

function peopleOutbox(services: Services, now: number) {
	const stats = outboxStats(services.db, now, "people_events");
	return {
		pending: stats.pending,
		oldest_pending_s: stats.oldestPendingS,
		dead: stats.dead,
		...(stats.lastError ? { last_error: redact(stats.lastError) } : {}),
	};
}

export function metricsText(services: Services): string {
	const states = [
		"connecting",
		"online",
		"offline",
		"unauthorized",
		"incompatible",
	];
	const counts = new Map(states.map((s) => [s, 0]));
	for (const entry of services.fleet.list()) {
		const state = entry.machine.status().state;
		counts.set(state, (counts.get(state) ?? 0) + 1);
	}
	const stats = outboxStats(services.db, services.threadDeps.now());
	return services.metrics.render([
		{
			name: "t3code_mcp_machines",
			help: "Configured machines by connection state",
			values: states.map((state) => ({
				labels: { state },
				value: counts.get(state) ?? 0,
			})),
		},
		{
			name: "t3code_mcp_outbox_pending",
			help: "Events waiting for delivery",
			values: [{ labels: {}, value: stats.pending }],
		},
		{
			name: "t3code_mcp_outbox_held",
			help: "Events held back: their project is not allowed now",
			values: [{ labels: {}, value: stats.held }],
		},
		{
			name: "t3code_mcp_outbox_dead",
			help: "Dead-lettered events",
			values: [{ labels: {}, value: stats.dead }],
		},
		{
			name: "t3code_mcp_outbox_oldest_pending_seconds",
			help: "Age of the oldest pending event",
			values: [{ labels: {}, value: stats.oldestPendingS }],
		},
		{
			name: "t3code_mcp_tasks",
			help: "MCP tasks held, by status",
			values: Object.entries(services.tasks.counts()).map(
				([status, value]) => ({ labels: { status }, value }),
			),
		},
		{
			name: "t3code_mcp_followed_threads",
			help: "Threads followed on their own stream, per machine",
			values: services.fleet.list().map((entry) => ({
				labels: { machine: entry.config.name },
				value: entry.machine.followStats?.().followed ?? 0,
			})),
		},
		{
			name: "t3code_mcp_token_expiry_seconds",
			help: "When each machine's T3 token expires, as T3 says (Unix time in seconds); absent when unknown",
			values: services.fleet.list().flatMap((entry) => {
				const at = entry.machine.status().tokenExpiresAt;
				const ms = at ? Date.parse(at) : Number.NaN;
				return Number.isFinite(ms)
					? [
							{
								labels: { machine: entry.config.name },
								value: Math.floor(ms / 1000),
							},
						]
					: [];
			}),
		},
		{
			name: "t3code_mcp_held_dispatches",
			help: "Dispatches held until a machine has room (or their not_before), all clients",
			values: [{ labels: {}, value: services.holding.count() }],
		},
		{
			name: "t3code_mcp_waits_in_progress",
			help: "t3_wait calls now waiting",
			values: [{ labels: {}, value: activeWaits() }],
		},
	]);
}
