import { describe, expect, test } from "bun:test";
import { createKeptViews } from "./kept-views.ts";

describe("kept views", () => {
	test("a kept view is taken once", () => {
		const kept = createKeptViews<string>(100, 50);
		kept.keep("m\u0000t1", "view 1", 10);
		expect(kept.take("m\u0000t1")).toBe("view 1");
		expect(kept.take("m\u0000t1")).toBeUndefined();
		expect(kept.stats()).toEqual({ views: 0, size: 0 });
	});

	test("past the budget the oldest views go first, whichever machine kept them", () => {
		const kept = createKeptViews<string>(100, 50);
		kept.keep("a\u0000t1", "a1", 40);
		kept.keep("b\u0000t1", "b1", 40);
		kept.keep("a\u0000t2", "a2", 40);
		expect(kept.stats()).toEqual({ views: 2, size: 80 });
		expect(kept.take("a\u0000t1")).toBeUndefined();
		expect(kept.take("b\u0000t1")).toBe("b1");
		expect(kept.take("a\u0000t2")).toBe("a2");
	});

	test("a view over the per-view share is not kept, and replaces nothing but its own", () => {
		const kept = createKeptViews<string>(100, 50);
		kept.keep("m\u0000t1", "small", 10);
		kept.keep("m\u0000t2", "long thread", 51);
		expect(kept.take("m\u0000t2")).toBeUndefined();
		expect(kept.stats()).toEqual({ views: 1, size: 10 });
		// Kept again under the same key: the older version is gone, and so is its count.
		kept.keep("m\u0000t1", "grown", 60);
		expect(kept.stats()).toEqual({ views: 0, size: 0 });
	});

	test("dropping a key frees its size", () => {
		const kept = createKeptViews<string>(100, 50);
		kept.keep("m\u0000t1", "v", 30);
		kept.drop("m\u0000t1");
		kept.drop("m\u0000absent");
		expect(kept.stats()).toEqual({ views: 0, size: 0 });
	});

	test("past the budget the oldest views are trimmed first, and dropped only if that is not enough", () => {
		const trimmed: string[] = [];
		const kept = createKeptViews<string>(100, 50, (view) => {
			trimmed.push(view);
			return 5;
		});
		kept.keep("m\u0000t1", "v1", 40);
		kept.keep("m\u0000t2", "v2", 40);
		kept.keep("m\u0000t3", "v3", 40);
		// 120 in all: the oldest is trimmed to 5, and every view stays resumable.
		expect(trimmed).toEqual(["v1"]);
		expect(kept.stats()).toEqual({ views: 3, size: 85 });
		kept.keep("m\u0000t4", "v4", 40);
		expect(trimmed).toEqual(["v1", "v2"]);
		expect(kept.stats()).toEqual({ views: 4, size: 90 });
		// A view over the per-view share is trimmed instead of refused.
		kept.keep("m\u0000t5", "long", 500);
		expect(trimmed).toEqual(["v1", "v2", "long"]);
		expect(kept.stats()).toEqual({ views: 5, size: 95 });
		expect(kept.take("m\u0000t5")).toBe("long");
		// Everything trimmed and still over: the oldest go.
		const tight = createKeptViews<string>(10, 50, () => 6);
		tight.keep("m\u0000a", "a", 20);
		tight.keep("m\u0000b", "b", 20);
		expect(tight.take("m\u0000a")).toBeUndefined();
		expect(tight.take("m\u0000b")).toBe("b");
	});
});
