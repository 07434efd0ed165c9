import { afterEach, expect, it } from "bun:test";
import { createLogger } from "./log.ts";
import {
	clearSecretsForTest,
	MASK,
	registerNames,
	registerSecrets,
} from "./redact.ts";

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

it("a name that begins like a secret stays readable; the secret is masked whole, wherever it is", () => {
	// A client "agent" whose token starts with its name (issue 41 item 8).
	registerSecrets(["agent-token-0123456789"]);
	registerNames(["agent"]); // as the config registers its clients' and machines' names
	const lines: string[] = [];
	const log = createLogger("debug", (line) => lines.push(line));
	log.child({ machine: "agent" }).debug("tool call agent", {
		client: "agent",
		who: "client agent",
		both: "agent-token-0123456789 agent",
		pieces: ["…agent-token-01234…", "agent-token-0123"],
	});
	const entry = JSON.parse(lines[0] as string);
	expect(entry.msg).toBe("tool call agent");
	expect(entry.client).toBe("agent");
	expect(entry.machine).toBe("agent");
	expect(entry.who).toBe("client agent");
	expect(entry.both).toBe(`${MASK} agent`);
	// A piece next to an ellipsis (a text cut and marked so) is still masked.
	expect(entry.pieces[0]).toBe(`…${MASK}…`);
	// A piece that is not whole words of the secret is masked at an edge, too.
	expect(entry.pieces[1]).toBe(MASK);
	expect(lines[0]).not.toContain("0123");
});
