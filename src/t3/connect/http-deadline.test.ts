/**
 * Each T3 request has a deadline over its answer and body (TIMEOUT with the URL when it
 * passes), and leaves no timer behind once answered.
 */
import { expect, test } from "bun:test";
import { createManualClock } from "../../util/clock.ts";
import { T3Error } from "../machine-api.ts";
import { createT3Http, type FetchLike } from "./http.ts";

/** A T3 server that never answers: the request ends only when its signal aborts. */
const silent: FetchLike = (_url, init) =>
	new Promise((_resolve, reject) => {
		init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
	});

test("a T3 server that does not answer in time is a TIMEOUT naming the request", async () => {
	const clock = createManualClock();
	const http = createT3Http({
		url: "http://127.0.0.1:9",
		token: "tok",
		fetch: silent,
		timeoutMs: 15_000,
		clock,
	});
	const pending = http.shell().catch((error) => error);
	clock.advance(15_000);
	const error = await pending;
	expect(error).toBeInstanceOf(T3Error);
	expect((error as T3Error).code).toBe("TIMEOUT");
	expect((error as T3Error).message).toBe(
		"GET http://127.0.0.1:9/api/orchestration/shell timed out after 15000 ms",
	);
});

test("a body that stops arriving is a TIMEOUT too", async () => {
	const clock = createManualClock();
	const stalled: FetchLike = async (_url, init) =>
		new Response(
			new ReadableStream({
				start(controller) {
					controller.enqueue(new TextEncoder().encode('{"projects":'));
					init?.signal?.addEventListener("abort", () =>
						controller.error(init.signal?.reason),
					);
				},
			}),
			{ status: 200, headers: { "content-type": "application/json" } },
		);
	const http = createT3Http({
		url: "http://127.0.0.1:9",
		token: "tok",
		fetch: stalled,
		clock,
	});
	const pending = http.shell().catch((error) => error);
	clock.advance(15_000);
	expect(((await pending) as T3Error).code).toBe("TIMEOUT");
});

test("an answered request leaves no timer pending", async () => {
	const clock = createManualClock();
	const answering: FetchLike = async () =>
		Response.json({ error: "nope" }, { status: 404 });
	const http = createT3Http({
		url: "http://127.0.0.1:9",
		token: "tok",
		fetch: answering,
		clock,
	});
	await http.thread("t-1").catch(() => {});
	expect(clock.pending()).toBe(0);
});
