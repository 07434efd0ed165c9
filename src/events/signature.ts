/** Standard Webhooks signing: `v1,` + base64 HMAC-SHA256 of "id.timestamp.body" with the whsec_ secret. */
import { createHmac } from "node:crypto";

export function signWebhook(
	secret: string,
	id: string,
	timestampS: number,
	body: string,
): string {
	const key = Buffer.from(
		secret.startsWith("whsec_") ? secret.slice(6) : secret,
		"base64",
	);
	const mac = createHmac("sha256", key)
		.update(`${id}.${timestampS}.${body}`)
		.digest("base64");
	return `v1,${mac}`;
}
