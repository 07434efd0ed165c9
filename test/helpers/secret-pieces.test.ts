import { describe, expect, test } from "bun:test";
import { findSecretPiece } from "./secret-pieces.ts";

const SECRET = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
const SIGNATURE = "Q".repeat(43);

function cursor(body: unknown): string {
	return `${Buffer.from(JSON.stringify(body)).toString("base64url")}.${SIGNATURE}`;
}

describe("findSecretPiece", () => {
	test("a cursor whose base64 spells a piece by chance is checked as the JSON it holds", () => {
		// Hex ids encode like the secret's hex text: the raw cursor holds a piece of it.
		const chance = cursor({ after: "23456789-abcd" });
		expect(chance).toContain("WFiY2");
		expect(SECRET).toContain("WFiY2");
		expect(findSecretPiece(`{"next_cursor":"${chance}"}`, [SECRET])).toBe(
			undefined,
		);
	});

	test("a secret inside a cursor's payload is still found", () => {
		const leaking = cursor({ query: SECRET });
		expect(
			findSecretPiece(`{"next_cursor":"${leaking}"}`, [SECRET])?.piece,
		).toBe(SECRET.slice(0, 5));
	});

	test("text that is not a cursor is searched as it is", () => {
		expect(
			findSecretPiece(`see ${SECRET.slice(9, 15)}`, [SECRET]),
		).toBeDefined();
	});
});
