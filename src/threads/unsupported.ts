/**
 * What a T3 server without a newer RPC or command answers: an unknown request tag or command
 * type is a `Die` (RELEASED-0.1.md, PROTOCOL.md §4.5), so the server predates the feature.
 * Said plainly, naming the machine and what still works, instead of a decode error.
 */
import { T3Error } from "../t3/machine-api.ts";
import { ThreadError } from "./errors.ts";

export function isUnsupported(error: unknown): boolean {
	return error instanceof T3Error && error.code === "DEFECT";
}

/**
 * Whether T3 died because it has no such method ("Unknown request tag", OBSERVED.md §4), as
 * opposed to a defect of one request (a payload it could not decode): only the first means the
 * feature is missing on that server.
 */
export function isUnknownMethod(error: unknown): boolean {
	return (
		error instanceof T3Error &&
		error.code === "DEFECT" &&
		/Unknown request tag/i.test(error.message)
	);
}

/** `what`: the feature ("adding projects"); `rpc`: T3's name for it; `instead`: what to do. */
export function unsupportedError(
	machine: string,
	what: string,
	rpc: string,
	instead?: string,
): ThreadError {
	return new ThreadError(
		`this T3 server (machine "${machine}") does not support ${what} (${rpc}, T3 Code 0.1.x)${instead ? `; ${instead}` : "."}`,
	);
}
