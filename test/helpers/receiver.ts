/**
 * A loopback webhook receiver that verifies Standard Webhooks signatures with the
 * `standardwebhooks` package, records every delivery and answers as the test tells it.
 */
import { Webhook } from "standardwebhooks";

export interface Delivery {
	headers: Record<string, string>;
	body: Record<string, unknown>;
	raw: string;
	verified: boolean;
}

export type ReceiverMode =
	| "ok"
	| "hang"
	| { status: number; retryAfter?: string; body?: string };

export interface Receiver {
	url: string;
	deliveries: Delivery[];
	/** Events by type in arrival order, e.g. `thread.completed`. */
	types(): string[];
	setMode(mode: ReceiverMode): void;
	attempts(): number;
	stop(): Promise<void>;
}

export const TEST_SECRET = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;

export function startReceiver(secret: string = TEST_SECRET): Receiver {
	const webhook = new Webhook(secret);
	const deliveries: Delivery[] = [];
	let mode: ReceiverMode = "ok";
	let attempts = 0;
	const hanging: (() => void)[] = [];
	const server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		idleTimeout: 0,
		async fetch(request) {
			attempts++;
			const raw = await request.text();
			if (mode === "hang") {
				return new Promise<Response>((resolve) =>
					hanging.push(() => resolve(new Response("late", { status: 503 }))),
				);
			}
			if (mode !== "ok") {
				const headers: Record<string, string> = mode.retryAfter
					? { "retry-after": mode.retryAfter }
					: {};
				return new Response(mode.body ?? "no", {
					status: mode.status,
					headers,
				});
			}
			const headers = Object.fromEntries(request.headers.entries());
			let verified = false;
			try {
				webhook.verify(raw, headers);
				verified = true;
			} catch {
				verified = false;
			}
			deliveries.push({ headers, body: JSON.parse(raw), raw, verified });
			return new Response(null, { status: 204 });
		},
	});
	return {
		url: `http://127.0.0.1:${server.port}/hook`,
		deliveries,
		types: () => deliveries.map((d) => d.body.type as string),
		setMode(next) {
			mode = next;
			if (next !== "hang") for (const release of hanging.splice(0)) release();
		},
		attempts: () => attempts,
		async stop() {
			for (const release of hanging.splice(0)) release();
			await server.stop(true);
		},
	};
}
