import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { signWebhook } from "./signature.ts";

describe("signWebhook", () => {
	it("matches the Standard Webhooks example", () => {
		expect(
			signWebhook(
				"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
				"msg_p5jXN8AQM9LWM0D4loKWxJek",
				1614265330,
				'{"test": 2432232314}',
			),
		).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	});

	it("the server does not load node:crypto (its JS layer costs ~4 MB and start-up time)", () => {
		const src = join(import.meta.dir, "..");
		const offending = readdirSync(src, { recursive: true, encoding: "utf8" })
			.filter(
				(f) =>
					f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.startsWith("sim"),
			)
			.filter((f) =>
				/from\s+["'](node:)?crypto["']/.test(
					readFileSync(join(src, f), "utf8"),
				),
			);
		expect(offending).toEqual([]);
	});
});
