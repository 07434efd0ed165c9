import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { cachedSchema, singleTypes } from "./cached-schema.ts";

const shape = z.object({ name: z.string() });

describe("cachedSchema", () => {
	test("converts to JSON Schema once and returns the same object after", () => {
		const schema = cachedSchema(shape);
		const first = schema["~standard"].jsonSchema.output({
			target: "draft-2020-12",
		});
		expect(first).toMatchObject({ type: "object" });
		expect(
			schema["~standard"].jsonSchema.output({ target: "draft-2020-12" }),
		).toBe(first);
	});

	test("validates by default", async () => {
		const result = await cachedSchema(shape)["~standard"].validate({ name: 1 });
		expect("issues" in result && result.issues?.length).toBeTruthy();
	});

	test("check: false passes a value through as it is (results the code built itself)", async () => {
		const value = { name: 1 };
		const result = await cachedSchema(shape, { check: false })[
			"~standard"
		].validate(value);
		expect(result as unknown).toEqual({ value });
	});
});

describe("singleTypes", () => {
	test("spells a type array as anyOf branches, keeping the keywords beside it", () => {
		expect(
			singleTypes({
				type: "object",
				properties: {
					a: { type: ["string", "null"], description: "d" },
					b: { type: "string" },
					c: { type: ["string"] },
				},
				additionalProperties: { type: ["string", "boolean"] },
			}),
		).toEqual({
			type: "object",
			properties: {
				a: { anyOf: [{ type: "string" }, { type: "null" }], description: "d" },
				b: { type: "string" },
				c: { type: ["string"] },
			},
			additionalProperties: {
				anyOf: [{ type: "string" }, { type: "boolean" }],
			},
		});
	});

	test("applies to the JSON Schema the SDK reads, for input and output", () => {
		const schema = cachedSchema(
			z.object({
				note: z.string().nullable(),
				options: z.record(z.string(), z.union([z.string(), z.boolean()])),
			}),
		);
		const json = (io: "input" | "output") =>
			JSON.stringify(
				(
					schema["~standard"] as unknown as {
						jsonSchema: Record<string, (o: unknown) => unknown>;
					}
				).jsonSchema[io]?.({ target: "draft-2020-12" }),
			);
		for (const io of ["input", "output"] as const) {
			expect(json(io)).not.toContain('"type":[');
			expect(json(io)).toContain('"anyOf":[{"type":"string"},{"type":"null"}]');
		}
	});
});
