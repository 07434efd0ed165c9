/**
 * Tool schemas with their JSON Schema computed once. The stateless handler builds a fresh
 * McpServer per request, and the SDK converts each tool's zod schema to JSON Schema for every
 * call (tools/list, and the output projection of tools/call): for a large output schema that
 * conversion was most of what a call cost on top of its own work.
 *
 * The cached JSON Schema also spells each multi-type `type` (zod 4 writes a nullable string as
 * `type: ["string", "null"]`) as `anyOf` branches of one type each: the same schema, but one
 * that clients mapping tool schemas onto a single-`type` dialect (Gemini function declarations)
 * accept; the MCP Inspector's `--strict` flags the array form.
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
				json = deepFreeze(
					singleTypes(standard.jsonSchema[io](options)) as Record<
						string,
						unknown
					>,
				);
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

/**
 * `{type: [a, b], …rest}` → `{anyOf: [{type: a}, {type: b}], …rest}`, everywhere in a JSON
 * Schema. zod only writes a `type` array for a union of bare types (a branch with any constraint
 * stays in `anyOf`), so the other keywords beside it (description, default) apply to every
 * branch and stay where they are. (A property named `type` holds a schema object, not an array,
 * so it is left alone.)
 */
export function singleTypes(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(singleTypes);
	if (!value || typeof value !== "object") return value;
	const out: Record<string, unknown> = {};
	for (const [key, child] of Object.entries(value))
		out[key] = singleTypes(child);
	const type = out.type;
	if (Array.isArray(type) && type.length > 1 && out.anyOf === undefined) {
		delete out.type;
		out.anyOf = type.map((t) => ({ type: t }));
	}
	return out;
}

function deepFreeze<T>(value: T): T {
	if (value && typeof value === "object" && !Object.isFrozen(value)) {
		Object.freeze(value);
		for (const child of Object.values(value)) deepFreeze(child);
	}
	return value;
}
