/**
 * The link store on a fresh state file: only the token's SHA-256 is stored, a POST takes a link
 * once, never after its expiry, and a settled request's link takes nothing.
 */
import { describe, expect, test } from "bun:test";
import { openDb } from "../store/db.ts";
import { createLinkStore, type LinkView } from "./link-store.ts";
import { newLinkToken, tokenHash } from "./tokens.ts";

const VIEW: LinkView = {
	machine: "demo",
	project: { id: "p1", title: "demo", path: "/srv/demo" },
	title: "run ls",
	prompt: "list files",
	request_kind: "command",
	decisions: [
		{ decision: "accept", label: "Accept", warning: null },
		{ decision: "decline", label: "Decline", warning: null },
	],
	app_name: null,
};

function fixture(now = 1_000_000) {
	const db = openDb(":memory:");
	const links = createLinkStore(db);
	const token = newLinkToken();
	const hash = tokenHash(token);
	links.insert({
		hash,
		thread: "t1",
		machine: "demo",
		request: "r1",
		config: "k",
		view: VIEW,
		now,
		expires: now + 3600_000,
	});
	return { db, links, token, hash };
}

describe("link store", () => {
	test("keeps the SHA-256 only: the token is nowhere in the file", () => {
		const { db, token, hash } = fixture();
		const dump = JSON.stringify(db.query("SELECT * FROM approval_links").all());
		expect(dump).toContain(hash);
		expect(dump).not.toContain(token);
	});

	test("one link per request", () => {
		const { links } = fixture();
		expect(
			links.insert({
				hash: tokenHash(newLinkToken()),
				thread: "t1",
				machine: "demo",
				request: "r1",
				config: "k",
				view: VIEW,
				now: 0,
				expires: 1,
			}),
		).toBe(false);
	});

	test("a POST takes an open link once", () => {
		const { links, hash } = fixture();
		expect(links.take(hash, "accept", 1_000_001)).toBe(true);
		expect(links.take(hash, "accept", 1_000_002)).toBe(false);
		links.giveBack(hash);
		expect(links.take(hash, "decline", 1_000_003)).toBe(true);
		links.decided(hash, "boss", 1_000_004);
		expect(links.byHash(hash)).toMatchObject({
			status: "decided",
			decision: "decline",
			decided_by: "boss",
			via: "link",
			settled_at: 1_000_004,
		});
		expect(links.take(hash, "accept", 1_000_005)).toBe(false);
	});

	test("an expired link takes nothing", () => {
		const { links, hash } = fixture(0);
		expect(links.take(hash, "accept", 3600_000)).toBe(false);
		expect(links.take(hash, "accept", 3599_999)).toBe(true);
	});

	test("settled elsewhere: records how, and takes nothing after", () => {
		const { links, hash } = fixture();
		expect(
			links.settle(
				"t1",
				"r1",
				{ decision: "accept", client: "ops", via: "mcp" },
				1_000_010,
			),
		).toBe(true);
		expect(links.byHash(hash)).toMatchObject({
			status: "settled",
			decision: "accept",
			decided_by: "ops",
			via: "mcp",
		});
		expect(links.take(hash, "accept", 1_000_011)).toBe(false);
		expect(links.unsettled()).toEqual([]);
	});

	test("a link being decided keeps its own decision when the request ends", () => {
		const { links, hash } = fixture();
		links.take(hash, "accept", 1_000_001);
		links.settle(
			"t1",
			"r1",
			{ decision: null, client: null, via: null },
			1_000_002,
		);
		expect(links.byHash(hash)).toMatchObject({
			status: "deciding",
			decision: "accept",
		});
	});
});
