/**
 * In-process counters and histograms, rendered in the Prometheus text format by /metrics.
 * Small on purpose: a map of labelled counters plus fixed-bucket histograms.
 */

type Labels = Record<string, string>;

const key = (name: string, labels: Labels) => {
	const parts = Object.entries(labels).map(
		([k, v]) => `${k}="${v.replace(/["\\\n]/g, "_")}"`,
	);
	return parts.length ? `${name}{${parts.join(",")}}` : name;
};

const LATENCY_BUCKETS_S = [
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

export interface Metrics {
	inc(name: string, labels?: Labels, by?: number): void;
	observe(name: string, seconds: number): void;
	/** `result`: "ok", "error", or the refusal's code (`capability_denied`, …). */
	toolCall(client: string, tool: string, result: string): void;
	/** Prometheus text; `gauges` are computed by the caller at scrape time. */
	render(
		gauges: {
			name: string;
			help: string;
			values: { labels: Labels; value: number }[];
		}[],
	): string;
}

export function createMetrics(): Metrics {
	const counters = new Map<string, { name: string; value: number }>();
	const histograms = new Map<
		string,
		{ counts: number[]; sum: number; count: number }
	>();
	const help: Record<string, string> = {
		t3code_mcp_tool_calls_total:
			"MCP tool calls by client, tool and result (ok, error or a refusal's code)",
		t3code_mcp_machine_reconnects_total: "WebSocket reconnects per machine",
		t3code_mcp_events_emitted_total: "Events written to the outbox",
		t3code_mcp_events_delivered_total: "Events delivered to the webhook",
		t3code_mcp_events_dead_total: "Events dead-lettered",
		t3code_mcp_delivery_attempts_total: "Webhook delivery attempts by result",
		t3code_mcp_follow_fallbacks_total:
			"Threads that could not be followed on their own stream (bound reached, stream lost)",
		t3code_mcp_placements_total:
			"New threads a machine pattern placed, by the machine chosen",
		t3code_mcp_event_delivery_latency_seconds:
			"From event recorded to webhook 2xx",
	};
	const metrics: Metrics = {
		inc(name, labels = {}, by = 1) {
			const k = key(name, labels);
			const entry = counters.get(k) ?? { name, value: 0 };
			entry.value += by;
			counters.set(k, entry);
		},
		observe(name, seconds) {
			const h = histograms.get(name) ?? {
				counts: LATENCY_BUCKETS_S.map(() => 0),
				sum: 0,
				count: 0,
			};
			LATENCY_BUCKETS_S.forEach((le, i) => {
				if (seconds <= le) h.counts[i] = (h.counts[i] ?? 0) + 1;
			});
			h.sum += seconds;
			h.count += 1;
			histograms.set(name, h);
		},
		toolCall(client, tool, result) {
			metrics.inc("t3code_mcp_tool_calls_total", { client, tool, result });
		},
		render(gauges) {
			const lines: string[] = [];
			const byName = new Map<string, string[]>();
			for (const [k, { name, value }] of counters) {
				const list = byName.get(name) ?? [];
				list.push(`${k} ${value}`);
				byName.set(name, list);
			}
			for (const [name, list] of byName) {
				lines.push(
					`# HELP ${name} ${help[name] ?? name}`,
					`# TYPE ${name} counter`,
					...list,
				);
			}
			for (const [name, h] of histograms) {
				lines.push(
					`# HELP ${name} ${help[name] ?? name}`,
					`# TYPE ${name} histogram`,
				);
				LATENCY_BUCKETS_S.forEach((le, i) => {
					lines.push(`${name}_bucket{le="${le}"} ${h.counts[i]}`);
				});
				lines.push(
					`${name}_bucket{le="+Inf"} ${h.count}`,
					`${name}_sum ${h.sum}`,
					`${name}_count ${h.count}`,
				);
			}
			for (const gauge of gauges) {
				lines.push(
					`# HELP ${gauge.name} ${gauge.help}`,
					`# TYPE ${gauge.name} gauge`,
				);
				for (const v of gauge.values)
					lines.push(`${key(gauge.name, v.labels)} ${v.value}`);
			}
			return `${lines.join("\n")}\n`;
		},
	};
	return metrics;
}
