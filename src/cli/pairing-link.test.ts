import { expect, test } from "bun:test";
import { machineNameFrom, parsePairingLink } from "./pairing-link.ts";

test("a pairing link: the server from the origin and base path, the credential from the hash", () => {
	expect(parsePairingLink("http://100.64.0.5:3773/pair#token=abc123")).toEqual({
		base: "http://100.64.0.5:3773",
		origin: "http://100.64.0.5:3773",
		basePath: "",
		credential: "abc123",
	});
	expect(parsePairingLink("https://t3.example/team/pair/#token=xyz")).toEqual({
		base: "https://t3.example/team",
		origin: "https://t3.example",
		basePath: "/team",
		credential: "xyz",
	});
	// A query token is accepted too.
	expect(parsePairingLink("http://h:1/pair?token=q1")).toMatchObject({
		credential: "q1",
	});
});

test("what is not a pairing link is said without repeating it", () => {
	for (const [text, message] of [
		["not a url secret-ish", "the pairing link is not a URL"],
		[
			"ftp://h/pair#token=s3cret-value",
			"the pairing link must be an http(s) URL",
		],
		[
			"http://u:p@h/pair#token=s3cret-value",
			"the pairing link must not carry user:password@",
		],
		["http://h/pair#code=s3cret-value", "the pairing link has no credential"],
	]) {
		const result = parsePairingLink(text as string);
		expect(typeof result).toBe("string");
		expect(result as string).toStartWith(message as string);
		expect(result as string).not.toContain("s3cret");
	}
});

test("a machine name from T3's label, else the host", () => {
	expect(machineNameFrom("Theo's MacBook Pro", "h")).toBe("theo-s-macbook-pro");
	expect(machineNameFrom(undefined, "100.64.0.5")).toBe("100-64-0-5");
	expect(machineNameFrom("***", "build.lan")).toBe("build-lan");
});
