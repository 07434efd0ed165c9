#!/usr/bin/env bun
/**
 * The GitHub release notes for a tag: its CHANGELOG.md section (the lines under
 * `## <version>` up to the next `## `), after checking that the tag is `v` + package.json's
 * version, so a release never ships under a tag its binaries do not report.
 *
 *   bun scripts/release-notes.ts v0.1.0 > notes.md
 *
 * Exit 0 with the notes on stdout; 1 with the reason on stderr.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

/** The body of the `## <version>` section (heading may go on: `## 0.1.0 — 2026-11-29`). */
export function changelogSection(
	changelog: string,
	version: string,
): string | undefined {
	const lines = changelog.split("\n");
	const heading = new RegExp(
		`^## \\[?v?${version.replaceAll(".", "\\.")}\\]?(\\s|$)`,
	);
	const start = lines.findIndex((l) => heading.test(l));
	if (start < 0) return undefined;
	const rest = lines.slice(start + 1);
	const end = rest.findIndex((l) => l.startsWith("## "));
	const body = (end < 0 ? rest : rest.slice(0, end)).join("\n").trim();
	return body === "" ? undefined : `${body}\n`;
}

/** Notes for `tag`, or the reason there are none. */
export function releaseNotes(
	tag: string,
	packageVersion: string,
	changelog: string,
): { notes: string } | { error: string } {
	if (tag !== `v${packageVersion}`)
		return {
			error: `tag "${tag}" does not match package.json version ${packageVersion}: tag v${packageVersion}, or bump the version first`,
		};
	const notes = changelogSection(changelog, packageVersion);
	return notes === undefined
		? {
				error: `CHANGELOG.md has no "## ${packageVersion}" section with text: rename "## Unreleased" to "## ${packageVersion} — <date>" before tagging`,
			}
		: { notes };
}

if (import.meta.main) {
	const tag = process.argv[2] ?? "";
	const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
		version: string;
	};
	const result = releaseNotes(
		tag,
		pkg.version,
		readFileSync(join(ROOT, "CHANGELOG.md"), "utf8"),
	);
	if ("error" in result) {
		process.stderr.write(`release-notes: ${result.error}\n`);
		process.exit(1);
	}
	process.stdout.write(result.notes);
}
