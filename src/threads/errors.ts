/**
 * The error a thread operation raises when the request cannot be carried out as asked (bad
 * argument, unknown thread, machine not online). Its message is written for the caller: what was
 * wrong and what is valid. Transport layers (MCP, stdio) decide how to present it.
 */
export class ThreadError extends Error {
	override readonly name = "ThreadError";
}
