/** The console (CONTRACT.md "Console") without a browser. */
import { expect } from "bun:test";

/** Signs in at the console on `base` with this client's token; the session cookie (`name=value`). */
export async function consoleCookie(
	base: string,
	token: string,
): Promise<string> {
	const signIn = await fetch(`${base}/console/sign-in`, {
		method: "POST",
		headers: { "content-type": "application/x-www-form-urlencoded" },
		body: `token=${token}`,
		redirect: "manual",
	});
	expect(signIn.status).toBe(303);
	return (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}
