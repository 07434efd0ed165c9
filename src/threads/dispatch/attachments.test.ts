/** T3's per-type limits and the types sent (a /mcp request never carries these sizes: unit level). */
import { describe, expect, test } from "bun:test";
import { attachmentsClaim, checkAttachments } from "./attachments.ts";

const MiB = 1024 * 1024;
const of = (bytes: number, mime_type: string, name = "f") => ({
	name,
	mime_type,
	data: Buffer.alloc(bytes, 1).toString("base64"),
});

describe("checkAttachments", () => {
	test("an image over 10 MiB is refused by T3's image limit, naming it", () => {
		expect(() =>
			checkAttachments([of(10 * MiB + 1, "image/png", "big.png")]),
		).toThrow(
			`attachments[0] ("big.png"): ${10 * MiB + 1} bytes is over T3's limit of 10 MiB for an image.`,
		);
	});

	test("T3's types: image/*, application/pdf, video/*, anything else a file; sizes decoded", () => {
		const prepared = checkAttachments([
			of(1, "image/jpeg"),
			of(2, "application/pdf"),
			of(3, "video/mp4"),
			of(4, "text/x-log"),
		]);
		expect(prepared.map((p) => [p.type, p.sizeBytes])).toEqual([
			["image", 1],
			["pdf", 2],
			["video", 3],
			["file", 4],
		]);
		expect(prepared[3]?.dataUrl).toBe(
			`data:text/x-log;base64,${Buffer.alloc(4, 1).toString("base64")}`,
		);
	});

	test("T3's limits on names and types: a blank name, a MIME type over 100 characters, each named", () => {
		expect(() => checkAttachments([of(1, "text/plain", "   ")])).toThrow(
			'attachments[0].name: must not be blank (got "   ").',
		);
		const long = `text/${"x".repeat(96)}`;
		expect(() => checkAttachments([of(1, long, "a.txt")])).toThrow(
			`attachments[0] ("a.txt").mime_type: 101 characters is over T3's limit of 100.`,
		);
		expect(
			checkAttachments([of(1, `text/${"x".repeat(95)}`, "a.txt")]),
		).toHaveLength(1);
	});

	test("exactly 3 MiB together is accepted; one byte more is refused", () => {
		expect(checkAttachments([of(3 * MiB, "application/zip")])).toHaveLength(1);
		expect(() =>
			checkAttachments([
				of(2 * MiB, "text/plain"),
				of(MiB + 1, "text/plain", "b"),
			]),
		).toThrow("over the limit of 3 MiB");
	});

	test("strict base64: padding only at the end, a multiple of 4, no URL alphabet", () => {
		const with_ = (data: string) => () =>
			checkAttachments([{ name: "f", mime_type: "text/plain", data }]);
		for (const bad of ["A===", "AB=C", "QUJD\n", "QUJ", "QU-_", "===="])
			expect(with_(bad)).toThrow("attachments[0].data: not base64");
		for (const good of ["", "QQ==", "QUI=", "QUJD"])
			expect(with_(good)).not.toThrow();
	});

	test("an idempotency claim holds a hash of the bytes, never the bytes", () => {
		const a = of(100, "text/plain");
		const claim = JSON.stringify(attachmentsClaim([a]));
		expect(claim).not.toContain(a.data);
		expect(claim).toMatch(/"sha256":"[0-9a-f]{64}"/);
	});
});
