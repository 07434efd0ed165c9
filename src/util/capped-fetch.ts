/**
 * A fetch whose answers are read to at most a fixed number of bytes (`pair`: 64 KiB, CONTRACT.md
 * "Trust round three"). A body declared bigger is refused before a byte of it is read; one that
 * grows past the limit is cut there, its connection let go, so a huge or endless answer is never
 * buffered. Reading such a body fails with `AnswerTooLargeError`.
 */

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export class AnswerTooLargeError extends Error {
	override name = "AnswerTooLargeError";
	constructor(
		readonly limit: number,
		declared?: number,
	) {
		super(
			declared !== undefined
				? `the answer is ${declared} bytes, more than the ${bytesShown(limit)} read at most`
				: `the answer is larger than the ${bytesShown(limit)} read at most`,
		);
	}
}

function bytesShown(n: number): string {
	return n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}

/**
 * `inner` with every answer's body limited to `maxBytes`.
 *
 * @example const fetch = cappedFetch(globalThis.fetch, 64 * 1024);
 */
export function cappedFetch(inner: Fetch, maxBytes: number): Fetch {
	return async (url, init) => {
		const res = await inner(url, init);
		if (res.body === null) return res;
		const length = res.headers.get("content-length");
		const declared = length === null ? Number.NaN : Number(length);
		return new Response(
			limited(
				res.body,
				maxBytes,
				Number.isFinite(declared) && declared > maxBytes ? declared : undefined,
			),
			{ status: res.status, statusText: res.statusText, headers: res.headers },
		);
	};
}

/** The body's bytes up to `max`; past it (or declared past it) an error, the source cancelled. */
function limited(
	body: ReadableStream<Uint8Array>,
	max: number,
	declared: number | undefined,
): ReadableStream<Uint8Array> {
	const reader = body.getReader();
	let seen = 0;
	const refuse = async (
		controller: ReadableStreamDefaultController<Uint8Array>,
		error: AnswerTooLargeError,
	) => {
		controller.error(error);
		await reader.cancel(error).catch(() => {});
	};
	return new ReadableStream<Uint8Array>({
		async start(controller) {
			if (declared !== undefined)
				await refuse(controller, new AnswerTooLargeError(max, declared));
		},
		async pull(controller) {
			const { value, done } = await reader.read();
			if (done) {
				controller.close();
				return;
			}
			seen += value.byteLength;
			if (seen > max) {
				await refuse(controller, new AnswerTooLargeError(max));
				return;
			}
			controller.enqueue(value);
		},
		cancel(reason) {
			return reader.cancel(reason);
		},
	});
}
