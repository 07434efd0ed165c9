/**
 * Whether the webhook receiver can be reached, for `check` (connects, sends nothing) and
 * `hook test` (why a POST did not arrive). Reasons are plain words, never the hook URL's path
 * or query: those often hold a secret.
 */
import { redact } from "../util/redact.ts";

export type Reach = { ok: true } | { ok: false; reason: string };

const CODES: Record<string, string> = {
	ECONNREFUSED: "connection refused (nothing listens on that port)",
	ENOTFOUND: "the host name does not resolve",
	EAI_AGAIN: "the host name could not be resolved now",
	ECONNRESET: "the connection was reset",
	EHOSTUNREACH: "no route to the host",
	ENETUNREACH: "the network is unreachable",
	ETIMEDOUT: "the connection timed out",
};

/** A connect or request failure in plain words (the error's code, redacted like outside text). */
export function reachFailure(cause: unknown, timeoutMs: number): string {
	const name = (cause as { name?: unknown })?.name;
	if (name === "TimeoutError" || name === "AbortError")
		return `no answer within ${timeoutMs / 1000} s`;
	const code = (cause as { code?: unknown })?.code;
	if (typeof code === "string" && CODES[code])
		return `${CODES[code]} (${code})`;
	// Bun's errors keep the URL in a property, not the message; redacted all the same.
	const text = cause instanceof Error ? cause.message : String(cause);
	return redact(typeof code === "string" ? `${code}: ${text}` : text, 200);
}

/**
 * Opens a TCP connection to the URL's host and port (and completes the TLS handshake for
 * https), then closes it: nothing is sent, so the receiver sees no event.
 */
export function probeUrl(raw: string, timeoutMs = 3_000): Promise<Reach> {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		return Promise.resolve({ ok: false, reason: "not a URL" });
	}
	const tls = url.protocol === "https:";
	const port = Number(url.port || (tls ? 443 : 80));
	// An IPv6 literal comes bracketed in `hostname`.
	const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
	return new Promise<Reach>((resolve) => {
		let settled = false;
		const end = (reach: Reach, socket?: { end(): void }) => {
			socket?.end();
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			resolve(reach);
		};
		const timer = setTimeout(
			() =>
				end({
					ok: false,
					reason: `no connection within ${timeoutMs / 1000} s`,
				}),
			timeoutMs,
		);
		Bun.connect({
			hostname,
			port,
			...(tls ? { tls: { serverName: hostname } } : {}),
			socket: {
				open(socket) {
					if (!tls) end({ ok: true }, socket);
				},
				handshake(socket, success, error) {
					end(
						success && !error
							? { ok: true }
							: {
									ok: false,
									reason: `TLS handshake failed${error ? ` (${redact(String((error as { code?: unknown }).code ?? error.message), 100)})` : ""}`,
								},
						socket,
					);
				},
				data() {},
				error(socket, error) {
					end({ ok: false, reason: reachFailure(error, timeoutMs) }, socket);
				},
				connectError(_socket, error) {
					end({ ok: false, reason: reachFailure(error, timeoutMs) });
				},
			},
		}).catch((error: unknown) =>
			end({ ok: false, reason: reachFailure(error, timeoutMs) }),
		);
	});
}
