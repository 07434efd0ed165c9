/**
 * One webhook POST as the contract shapes it (CONTRACT.md "Events"): its headers (bearer,
 * origin, Standard Webhooks id, timestamp and signature) and the start of a refusal's body.
 * The outbox's deliveries and `t3code-mcp hook test` both send through this, so a receiver
 * that accepts the test accepts the events.
 */
import { signWebhook } from "./signature.ts";

export interface WebhookAuth {
	/** Sent as `Authorization: Bearer …` (T3CODE_MCP_HOOK_TOKEN). */
	token: string | undefined;
	/** `whsec_…`: signs the body (T3CODE_MCP_HOOK_SECRET). */
	secret: string | undefined;
}

/** The headers of one POST of `body` (exactly the bytes sent) as event `id` at `timestampS`. */
export function webhookHeaders(
	auth: WebhookAuth,
	event: { id: string; origin: string | null; body: string },
	timestampS: number,
): Record<string, string> {
	const headers: Record<string, string> = {
		"content-type": "application/json",
		"user-agent": "t3code-mcp",
		"webhook-id": event.id,
		"webhook-timestamp": String(timestampS),
	};
	if (auth.token) headers.authorization = `Bearer ${auth.token}`;
	if (event.origin !== null) headers["x-conversation-origin"] = event.origin;
	if (auth.secret)
		headers["webhook-signature"] = signWebhook(
			auth.secret,
			event.id,
			timestampS,
			event.body,
		);
	return headers;
}

/** How much of a refusal's body is read: enough for a reason, never a whole error page. */
const SNIPPET_BYTES = 1024;

/** The start of a reply's body as one line of text, or "" when it has none or cannot be read. */
export async function replySnippet(response: Response): Promise<string> {
	const reader = response.body?.getReader();
	if (!reader) return "";
	const chunks: Uint8Array[] = [];
	let size = 0;
	try {
		while (size < SNIPPET_BYTES) {
			const { done, value } = await reader.read();
			if (done) break;
			chunks.push(value);
			size += value.byteLength;
		}
	} catch {
		// A body cut off mid-way: keep what arrived.
	} finally {
		await reader.cancel().catch(() => {});
	}
	const text = new TextDecoder().decode(
		Buffer.concat(chunks).subarray(0, SNIPPET_BYTES),
	);
	return text.replace(/\s+/g, " ").trim();
}
