import { afterEach, describe, expect, it } from "bun:test";
import { seededRandom as random } from "../../test/helpers/seeded-random.ts";
import { createGramIndex } from "./gram-index.ts";
import {
	clearSecretsForTest,
	MASK,
	maskDeep,
	maskPieces,
	maskSecrets,
	registerSecrets,
} from "./redact.ts";

afterEach(clearSecretsForTest);

describe("createGramIndex", () => {
	it("names every value whose gram starts in the range, and no other", () => {
		const index = createGramIndex(3, [
			["abc", "A"],
			["bcd", "B"],
			["zzz", "Z"],
		]);
		expect([...index.candidates("xxabcdxx")].sort()).toEqual(["A", "B"]);
		expect([...index.candidates("xxabcdxx", 3)]).toEqual(["B"]);
		expect([...index.candidates("xxabcdxx", 0, 3)]).toEqual(["A"]);
		expect(index.candidates("ab").size).toBe(0);
		expect(index.candidates("zzz").has("Z")).toBe(true);
	});

	it("finds what a search of every gram finds, with few grams (indexOf) and many (one pass)", () => {
		const next = random(20261203);
		const word = (n: number) =>
			Array.from({ length: n }, () => "abcd"[Math.floor(next() * 4)]).join("");
		for (const count of [1, 3, 4, 5, 40]) {
			const grams = Array.from({ length: count }, () => word(4));
			const index = createGramIndex(
				4,
				grams.map((g, i) => [g, i]),
			);
			for (let round = 0; round < 300; round++) {
				const text = word(Math.floor(next() * 60));
				const from = Math.floor(next() * (text.length + 1));
				const to = from + Math.floor(next() * (text.length - from + 1));
				const expected = grams.flatMap((g, i) => {
					const at = text.indexOf(g, from);
					return at !== -1 && at < to ? [i] : [];
				});
				// The one pass may add hash-only matches (callers verify), never miss one.
				const found = index.candidates(text, from, to);
				for (const i of expected) expect(found.has(i)).toBe(true);
				if (count <= 4)
					expect([...found].sort((a, b) => a - b)).toEqual(expected);
			}
		}
	});
});

// The masking loops before the gram index: every secret tried against every text. The indexed
// ones must give the same text for any input.
function reference(secrets: string[]) {
	const ordered = [...secrets].sort((a, b) => b.length - a.length);
	const whole = (text: string) => {
		let out = text;
		for (const s of ordered) if (out.includes(s)) out = out.replaceAll(s, MASK);
		return out;
	};
	const tail = (text: string, s: string) => {
		const head = s.slice(0, 5);
		for (
			let i = text.indexOf(head, Math.max(0, text.length - (s.length - 1)));
			i !== -1 && text.length - i >= 5;
			i = text.indexOf(head, i + 1)
		)
			if (s.startsWith(text.slice(i))) return `${text.slice(0, i)}${MASK}`;
		return text;
	};
	const head = (text: string, s: string) => {
		const end = s.slice(-5);
		const window = text.slice(0, s.length - 1);
		let cut = -1;
		for (let i = window.indexOf(end); i !== -1; i = window.indexOf(end, i + 1))
			if (s.endsWith(window.slice(0, i + 5))) cut = i + 5;
		return cut === -1 ? text : `${MASK}${text.slice(cut)}`;
	};
	return {
		whole: (text: string) => (text.length < 8 ? text : whole(text)),
		pieces: (text: string) => {
			if (text.length < 5) return text;
			let out = whole(text);
			for (const s of ordered) out = head(tail(out, s), s);
			return out;
		},
	};
}

describe("masking through the gram index", () => {
	it("masks exactly as trying every secret would, over random texts", () => {
		const next = random(20261202);
		const alphabet = "abcdef0123_-";
		const word = (n: number) =>
			Array.from(
				{ length: n },
				() => alphabet[Math.floor(next() * alphabet.length)],
			).join("");
		// Many secrets sharing beginnings and ends, some inside others.
		const secrets = Array.from({ length: 300 }, () =>
			word(8 + Math.floor(next() * 20)),
		);
		secrets.push(`${secrets[0]}${secrets[1]}`, `xx${secrets[2]}`);
		registerSecrets(secrets);
		const ref = reference(secrets);
		for (let round = 0; round < 2000; round++) {
			const parts: string[] = [];
			for (let k = Math.floor(next() * 5); k >= 0; k--) {
				const s = secrets[Math.floor(next() * secrets.length)] as string;
				const roll = next();
				parts.push(
					roll < 0.3
						? s
						: roll < 0.5
							? s.slice(0, 5 + Math.floor(next() * (s.length - 5)))
							: roll < 0.7
								? s.slice(Math.floor(next() * (s.length - 5)))
								: word(Math.floor(next() * 12)),
				);
			}
			const text = parts.join(next() < 0.5 ? "" : " ");
			expect(maskSecrets(text)).toBe(ref.whole(text));
			expect(maskPieces(text)).toBe(ref.pieces(text));
		}
	});

	it("finds one secret among 2 000 and leaves a text holding none as it is", () => {
		registerSecrets(
			Array.from({ length: 2000 }, (_, i) => `secret-${i}-${"x".repeat(24)}`),
		);
		const text = "a title with no secret in it at all, of an ordinary length";
		// The index is what is under test here, not a timing: no candidate, no copy.
		expect(maskDeep({ title: text }).title).toBe(text);
		expect(maskSecrets(`${text} secret-1999-${"x".repeat(24)}`)).toBe(
			`${text} ${MASK}`,
		);
	});
});
