/**
 * `X-Conversation-Origin` (CONTRACT.md "Environment"): printable ASCII, at most 256 characters.
 * It is stored with each dispatch and sent back as a webhook header, so anything else would
 * be garbled (non-ASCII) or unbounded; such a request gets 400 naming the header.
 */
import type { MiddlewareHandler } from "hono";

export const ORIGIN_HEADER = "x-conversation-origin";
const ORIGIN_MAX = 256;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Why the header value is refused, or undefined when it is acceptable. */
export function originHeaderProblem(value: string): string | undefined {
	if (!PRINTABLE_ASCII.test(value))
		return "must be printable ASCII (characters 0x20-0x7E)";
	if (value.length > ORIGIN_MAX)
		return `must be at most ${ORIGIN_MAX} characters, got ${value.length}`;
	return undefined;
}

export const conversationOriginGuard = (): MiddlewareHandler =>
	async function conversationOriginGuard(c, next) {
		const value = c.req.header(ORIGIN_HEADER);
		const problem =
			value === undefined ? undefined : originHeaderProblem(value);
		if (problem !== undefined)
			return c.json(
				{ error: `invalid X-Conversation-Origin header: ${problem}` },
				400,
			);
		await next();
	};
