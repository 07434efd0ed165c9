/**
 * A loopback webhook receiver that stamps each POST with wall time (epoch ms, sub-ms precision,
 * comparable with the simulators' outcome times in any process) when its body is in,
 * answers 204 at once and skips signature checks (test/helpers/receiver.ts covers those).
 */
import { wallMs } from "../../src/sim/runs/outcome-times.ts";

export interface Received {
	at: number;
	body: { id: string; type: string; thread_id: string; run_id: string | null };
}

export function startTimedReceiver() {
	const received: Received[] = [];
	const listeners = new Set<(r: Received) => void>();
	const server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		idleTimeout: 0,
		async fetch(request) {
			const text = await request.text();
			const entry: Received = { at: wallMs(), body: JSON.parse(text) };
			received.push(entry);
			for (const listener of listeners) listener(entry);
			return new Response(null, { status: 204 });
		},
	});
	return {
		url: `http://127.0.0.1:${server.port}/hook`,
		received,
		on(listener: (r: Received) => void) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		stop: () => server.stop(true),
	};
}
