import { afterEach, expect, it } from "bun:test";
import { createLogger } from "./log.ts";
import { clearSecretsForTest, MASK, registerSecrets } from "./redact.ts";

afterEach(clearSecretsForTest);

it("the safety net masks secrets in the message and in nested fields, and caps long strings", () => {
	registerSecrets(["configured-secret-42"]);
	const lines: string[] = [];
	const log = createLogger("debug", (line) => lines.push(line));
	log.child({ machine: "m" }).warn("saw configured-secret-42", {
		token: "anything",
		nested: {
			reply: "Authorization: Bearer abcdefghijkl",
			list: ["configured-secret-42"],
		},
		error: new Error("body: configured-secret-42"),
		long: "x".repeat(2_000),
	});
	const entry = JSON.parse(lines[0] as string);
	expect(entry.msg).toBe(`saw ${MASK}`);
	expect(entry.token).toBe(MASK);
	expect(entry.nested).toEqual({
		reply: `Authorization: ${MASK}`,
		list: [MASK],
	});
	expect(entry.error).toBe(`body: ${MASK}`);
	expect(entry.long.length).toBe(500);
	expect(entry.machine).toBe("m");
});
