/**
 * Whether a T3 server takes `message.dispatch` `deliveryIntent` (T3 0.1.x: "resolve untargeted
 * delivery against the server's serialized thread state"). A descriptor that says so decides:
 * `environment.capabilities.serverResolvedCommandContext`, the flag T3's own clients read before
 * they send the field (client-runtime `supportsServerResolvedCommandContext`, idx 70174805780;
 * REVIEW-fa93027.md A25). Only a descriptor without the flag is asked. A server without the
 * field (the pre-release engine) drops it without a word, so silence proves nothing: we send a
 * `message.dispatch` with a `deliveryIntent` that is no valid value, to a thread that does not
 * exist. A server that knows the field refuses it while decoding (a defect naming
 * `deliveryIntent`); one that does not drops it and refuses the command for the missing thread
 * (a typed failure). Either way nothing runs. Any other answer (a lost connection, a timeout)
 * decides nothing and is thrown.
 */
import { isRecord } from "../decode/json.ts";
import { T3Error } from "../machine-api.ts";
import type { EnvironmentDescriptor } from "../model.ts";

const PROBE_VALUE = "t3code-mcp-probe";

/**
 * What the descriptor says: T3's clients send `deliveryIntent` only when the flag is `true`, so
 * `false` is a no; undefined when the descriptor carries no such flag (then the probe decides).
 */
export function declaredDeliveryIntent(
	descriptor: EnvironmentDescriptor,
): boolean | undefined {
	const capabilities = descriptor.capabilities;
	if (!isRecord(capabilities)) return undefined;
	const flag = capabilities.serverResolvedCommandContext;
	return typeof flag === "boolean" ? flag : undefined;
}

export async function probeDeliveryIntent(
	send: (command: Record<string, unknown>) => Promise<unknown>,
	newId: () => string = () => crypto.randomUUID(),
): Promise<boolean> {
	try {
		await send({
			type: "message.dispatch",
			commandId: newId(),
			threadId: `t3code-mcp-probe-${newId()}`,
			messageId: newId(),
			text: "",
			attachments: [],
			createdBy: "user",
			creationSource: "mcp",
			deliveryIntent: PROBE_VALUE,
			dispatchMode: { type: "start_immediately" },
		});
	} catch (error) {
		if (error instanceof T3Error && error.code === "DEFECT")
			// The raw defect too: the message is capped, and a decoder's text can be long.
			return `${error.message} ${String(error.detail?.raw ?? "")}`.includes(
				"deliveryIntent",
			);
		if (error instanceof T3Error && error.code === "REJECTED") return false;
		throw error;
	}
	// Accepted for a thread that cannot exist: not a server we understand; do not rely on it.
	return false;
}
