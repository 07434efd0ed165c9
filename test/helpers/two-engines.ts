/**
 * The stack most 0.1.x tests share: machine "demo" on the current simulator, machine "old" on
 * the pre-release engine (`--compat prerelease`), and a webhook receiver with a signing secret
 * (a configured secret, so masking can be seen in outputs).
 */
import type { Client } from "@modelcontextprotocol/client";
import { type Receiver, startReceiver, TEST_SECRET } from "./receiver.ts";
import { type Stack, startStack } from "./stack.ts";

export interface TwoEngines {
	receiver: Receiver;
	stack: Stack;
	client: Client;
}

export async function startTwoEngines(): Promise<TwoEngines> {
	const receiver = startReceiver();
	const stack = await startStack({
		machines: [
			{ name: "demo" },
			{ name: "old", sim: { compat: "prerelease" } },
		],
		server: { hookUrl: receiver.url, hookSecret: TEST_SECRET },
	});
	return { receiver, stack, client: await stack.client() };
}

export async function stopTwoEngines({
	stack,
	receiver,
}: Pick<TwoEngines, "stack" | "receiver">): Promise<void> {
	await stack.stop();
	await receiver.stop();
}
