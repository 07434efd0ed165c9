/** Standard Webhooks signing: `v1,` + base64 HMAC-SHA256 of "id.timestamp.body" with the whsec_ secret. */

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
	// Bun's own HMAC: importing node:crypto loads its JS layer (streams and all) at start-up,
	// ~4 MB of memory and a few ms before /healthz answers.
	const mac = new Bun.CryptoHasher("sha256", key)
		.update(`${id}.${timestampS}.${body}`)
		.digest("base64");
	return `v1,${mac}`;
}
