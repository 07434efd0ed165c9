/**
 * Whether a T3 server takes `message.dispatch` `deliveryIntent` (T3 0.1.x: "resolve untargeted
 * delivery against the server's serialized thread state"). No descriptor capability announces
 * it, and a server without it (the pre-release engine) drops the field without a word, so
 * silence proves nothing. So we ask in a way whose answer tells: a `message.dispatch` with a
 * `deliveryIntent` that is no valid value, to a thread that does not exist. A server that knows
 * the field refuses it while decoding (a defect naming `deliveryIntent`); one that does not
 * drops it and refuses the command for the missing thread (a typed failure). Either way nothing
 * runs. Any other answer (a lost connection, a timeout) decides nothing and is thrown.
 */
import { T3Error } from "../machine-api.ts";

const PROBE_VALUE = "t3code-mcp-probe";

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
