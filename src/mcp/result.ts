/**
 * Tool results: structured content plus the same JSON as text (for clients that ignore
 * structured results), and errors the model can act on as `isError` results.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { maskCredentials, maskDeep, mayHoldSecret } from "../util/redact.ts";

/**
 * A result. Its texts came from T3 and were masked where they were shaped; this is the safety
 * net for every field at once (CONTRACT.md "HTTP"): a few `includes` over the JSON, and a masked
 * copy only when a secret or a piece of one may be in it.
 */
export function ok<T extends Record<string, unknown>>(
	data: T,
	note?: string,
): CallToolResult {
	let structured = data;
	let text = JSON.stringify(data);
	if (mayHoldSecret(text)) {
		structured = maskDeep(data);
		text = JSON.stringify(structured);
	}
	const content: CallToolResult["content"] = [{ type: "text", text }];
	if (note) content.push({ type: "text", text: maskDeep(note) });
	return { content, structuredContent: structured };
}

/** An error result; its message may quote a T3 error body, so credentials are masked too. */
export function toolError(message: string): CallToolResult {
	return {
		content: [{ type: "text", text: maskCredentials(message) }],
		isError: true,
	};
}

/** An expected failure a handler raises deep in a service; the tool layer turns it into `toolError`. */
export class ToolFailure extends Error {
	override readonly name = "ToolFailure";
}
