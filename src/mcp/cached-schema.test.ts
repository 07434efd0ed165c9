import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { cachedSchema } from "./cached-schema.ts";

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
