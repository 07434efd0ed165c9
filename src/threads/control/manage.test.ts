import { afterEach, expect, test } from "bun:test";
import { T3Error } from "../../t3/machine-api.ts";
import { clearSecretsForTest, registerSecrets } from "../../util/redact.ts";
import { t3Reason } from "./manage.ts";

afterEach(() => clearSecretsForTest());

test("a refusal shows T3's most specific reason, secrets masked and capped", () => {
	registerSecrets(["s3cret-token-value"]);
	const error = new T3Error("REJECTED", "Failed to load turn diff", {
		tag: "OrchestrationGetTurnDiffError",
		raw: {
			message: "Failed to load turn diff",
			cause: {
				name: "CheckpointRefUnavailableError",
				message: `Checkpoint ref is unavailable (token s3cret-token-value) ${"x".repeat(600)}`,
			},
		},
	});
	const reason = t3Reason(error);
	expect(reason.startsWith("Checkpoint ref is unavailable (token ")).toBe(true);
	expect(reason).not.toContain("s3cret-token-value");
	expect(reason.length).toBeLessThanOrEqual(500);
	expect(t3Reason(new T3Error("REJECTED", "plain"))).toBe("plain");
});
