/**
 * Tool schemas with their JSON Schema computed once. The stateless handler builds a fresh
 * McpServer per request, and the SDK converts each tool's zod schema to JSON Schema for every
 * call (tools/list, and the output projection of tools/call): for a large output schema that
 * conversion was most of what a call cost on top of its own work.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";

type JsonSchemaFn = (options: unknown) => Record<string, unknown>;

/** Passes a value through unchecked (`check: false`). */
const unchecked = (value: unknown) => ({ value });

export function cachedSchema<S extends StandardSchemaWithJSON>(
	schema: S,
	options: { check?: boolean } = {},
): S {
	const standard = schema["~standard"] as S["~standard"] & {
		jsonSchema: { input: JsonSchemaFn; output: JsonSchemaFn };
	};
	const cache = new Map<string, Record<string, unknown>>();
	const memo =
		(io: "input" | "output"): JsonSchemaFn =>
		(options) => {
			const key = `${io}:${JSON.stringify(options ?? null)}`;
			let json = cache.get(key);
			if (!json) {
				// Frozen: the SDK only reads (and spreads) it, and a copy per call cost as
				// much as the conversion it saves.
				json = deepFreeze(standard.jsonSchema[io](options));
				cache.set(key, json);
			}
			return json;
		};
	return {
		"~standard": {
			...standard,
			validate: options.check === false ? unchecked : standard.validate,
			jsonSchema: { input: memo("input"), output: memo("output") },
		},
	} as unknown as S;
}

function deepFreeze<T>(value: T): T {
	if (value && typeof value === "object" && !Object.isFrozen(value)) {
		Object.freeze(value);
		for (const child of Object.values(value)) deepFreeze(child);
	}
	return value;
}
