/**
 * Tool results: structured content plus the same JSON as text (for clients that ignore
 * structured results), and errors the model can act on as `isError` results.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";

export function ok<T extends Record<string, unknown>>(
	data: T,
	note?: string,
): CallToolResult {
	const content: CallToolResult["content"] = [
		{ type: "text", text: JSON.stringify(data) },
	];
	if (note) content.push({ type: "text", text: note });
	return { content, structuredContent: data };
}

export function toolError(message: string): CallToolResult {
	return { content: [{ type: "text", text: message }], isError: true };
}

/** An expected failure a handler raises deep in a service; the tool layer turns it into `toolError`. */
export class ToolFailure extends Error {
	override readonly name = "ToolFailure";
}
