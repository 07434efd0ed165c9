import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { changelogSection, releaseNotes } from "./release-notes.ts";

const CHANGELOG = `# Changelog

Intro.

## Unreleased

- next thing

## 0.2.0 — 2026-12-24

- second
  continued

## 0.1.0 — 2026-11-29

First release.
`;

describe("release notes", () => {
	test("the section of the version, up to the next heading", () => {
		expect(changelogSection(CHANGELOG, "0.2.0")).toBe(
			"- second\n  continued\n",
		);
		expect(changelogSection(CHANGELOG, "0.1.0")).toBe("First release.\n");
		// 0.1.0 must not match 0.1.01 or 0x1y0.
		expect(changelogSection("## 0.1.01\n\nx\n", "0.1.0")).toBeUndefined();
		expect(changelogSection("## 0x1y0\n\nx\n", "0.1.0")).toBeUndefined();
	});

	test("the tag must be v + package.json's version, and the section must exist", () => {
		expect(releaseNotes("v0.2.0", "0.2.0", CHANGELOG)).toEqual({
			notes: "- second\n  continued\n",
		});
		expect(releaseNotes("v0.2.1", "0.2.0", CHANGELOG)).toEqual({
			error:
				'tag "v0.2.1" does not match package.json version 0.2.0: tag v0.2.0, or bump the version first',
		});
		expect(releaseNotes("0.2.0", "0.2.0", CHANGELOG)).toHaveProperty("error");
		const missing = releaseNotes("v0.3.0", "0.3.0", CHANGELOG);
		expect(missing).toEqual({
			error:
				'CHANGELOG.md has no "## 0.3.0" section with text: rename "## Unreleased" to "## 0.3.0 — <date>" before tagging',
		});
	});

	test("this repository's version has its CHANGELOG section", () => {
		const root = join(import.meta.dir, "..");
		const { version } = JSON.parse(
			readFileSync(join(root, "package.json"), "utf8"),
		) as { version: string };
		const notes = releaseNotes(
			`v${version}`,
			version,
			readFileSync(join(root, "CHANGELOG.md"), "utf8"),
		);
		expect(notes).toHaveProperty("notes");
	});
});
