/**
 * An `initialize` request whose params are missing or malformed. The SDK validates the params of
 * spec methods but answers a failure as -32603 with the whole zod issue list as its message;
 * callers get -32602 (invalid params) with one short line instead. Both transports (HTTP and
 * stdio) ask this before handing a message to the SDK.
 */

const INVALID_PARAMS = -32602;

export interface JsonRpcError {
	jsonrpc: "2.0";
	id: string | number;
	error: { code: number; message: string };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
	typeof v === "object" && v !== null && !Array.isArray(v);

/** The error response to send instead, or undefined when the message is not a bad initialize. */
export function badInitialize(message: unknown): JsonRpcError | undefined {
	if (!isObject(message) || message.method !== "initialize") return undefined;
	const id = message.id;
	if (typeof id !== "string" && typeof id !== "number") return undefined;
	const params = message.params;
	const missing: string[] = [];
	if (!isObject(params)) missing.push("params");
	else {
		if (typeof params.protocolVersion !== "string")
			missing.push("params.protocolVersion (a string)");
		if (!isObject(params.capabilities))
			missing.push("params.capabilities (an object)");
		if (!isObject(params.clientInfo))
			missing.push("params.clientInfo (an object with name and version)");
	}
	if (missing.length === 0) return undefined;
	return {
		jsonrpc: "2.0",
		id,
		error: {
			code: INVALID_PARAMS,
			message: `Invalid params for initialize: missing ${missing.join(", ")}`,
		},
	};
}
