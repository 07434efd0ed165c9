/** The official MCP client against a running server (legacy era, like most clients today). */
import {
	Client,
	StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";

export async function connectMcp(mcpUrl: string): Promise<Client> {
	const client = new Client({ name: "t3code-mcp-bench", version: "1.0.0" });
	await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
	return client;
}

export async function call<T = Record<string, unknown>>(
	client: Client,
	name: string,
	args: Record<string, unknown> = {},
	timeoutMs = 120_000,
): Promise<T> {
	const result = await client.callTool(
		{ name, arguments: args },
		{ timeout: timeoutMs, resetTimeoutOnProgress: true },
	);
	if (result.isError) {
		const text = (result.content as { text?: string }[] | undefined)
			?.map((c) => c.text)
			.join(" ");
		throw new Error(`${name} failed: ${text}`);
	}
	return (result.structuredContent ?? {}) as T;
}
