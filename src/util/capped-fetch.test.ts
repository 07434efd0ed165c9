import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AnswerTooLargeError, cappedFetch } from "./capped-fetch.ts";

const KIB = 1024;
const MIB = 1024 * KIB;
/** Bytes the endless route has handed to the socket, per request. */
const produced: number[] = [];
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
	server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch(request) {
			const path = new URL(request.url).pathname;
			if (path === "/small") return Response.json({ ok: true });
			if (path === "/exact") return new Response("x".repeat(64 * KIB));
			// 80 MiB declared up front.
			if (path === "/declared")
				return new Response(new Uint8Array(80 * MIB), {
					headers: { "content-type": "application/json" },
				});
			// 80 MiB streamed without a length, produced only as it is read.
			const at = produced.push(0) - 1;
			const chunk = new Uint8Array(64 * KIB).fill(0x20);
			return new Response(
				new ReadableStream<Uint8Array>({
					pull(controller) {
						if ((produced[at] as number) >= 80 * MIB) controller.close();
						else {
							produced[at] = (produced[at] as number) + chunk.byteLength;
							controller.enqueue(chunk);
						}
					},
				}),
				{ headers: { "content-type": "application/json" } },
			);
		},
	});
});
afterAll(() => server.stop(true));

const capped = cappedFetch((url, init) => fetch(url, init), 64 * KIB);
const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

describe("cappedFetch", () => {
	it("passes an answer within the limit through unchanged, up to the limit exactly", async () => {
		const small = await capped(url("/small"));
		expect(small.status).toBe(200);
		expect(await small.json()).toEqual({ ok: true });
		expect((await (await capped(url("/exact"))).text()).length).toBe(64 * KIB);
	});

	it("refuses an 80 MiB answer declared by its length before reading it", async () => {
		const res = await capped(url("/declared"));
		const error = await res.json().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(AnswerTooLargeError);
		expect((error as Error).message).toBe(
			`the answer is ${80 * MIB} bytes, more than the 64 KiB read at most`,
		);
	});

	it("cuts an 80 MiB streamed answer after 64 KiB, without reading the rest", async () => {
		const res = await capped(url("/endless"));
		const error = await res.text().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(AnswerTooLargeError);
		expect((error as Error).message).toBe(
			"the answer is larger than the 64 KiB read at most",
		);
		// The server produced what socket buffers hold, not the 80 MiB.
		expect(produced.at(-1) as number).toBeLessThan(16 * MIB);
	});
});
