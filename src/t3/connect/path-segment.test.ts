import { expect, test } from "bun:test";
import { T3Error } from "../machine-api.ts";
import { createT3Http } from "./http.ts";
import { pathSegmentProblem } from "./path-segment.ts";

test("ids that would leave their path segment are refused; everything else passes", () => {
	for (const id of ["", ".", "..", "a/b", "/", "a\\b", "\\"])
		expect([id, pathSegmentProblem(id)]).not.toEqual([id, null]);
	for (const id of ["thread%3A1", "...", ".a", "a b", "ü", "a?b#c", "%2F"])
		expect([id, pathSegmentProblem(id)]).toEqual([id, null]);
});

test("the URL builder refuses a bad thread id without sending, and percent-encodes the rest", async () => {
	const urls: string[] = [];
	const http = createT3Http({
		url: "http://t3.test",
		token: "secret-token-for-test",
		fetch: async (url) => {
			urls.push(String(url));
			return new Response("{}", { status: 404 });
		},
	});
	for (const id of [".", "..", "../shell", "a/b", "a\\b", ""]) {
		const error = await http.thread(id).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(T3Error);
		expect((error as T3Error).code).toBe("INVALID_ID");
	}
	expect(urls).toEqual([]);
	await http.thread("thread%3A1 x?").catch(() => {});
	expect(urls).toEqual([
		"http://t3.test/api/orchestration/threads/thread%253A1%20x%3F",
	]);
});
