/**
 * Lints the Dockerfile's structure (no Docker engine here): two stages, base images pinned by
 * explicit tags, the build stage cross-compiling on $BUILDPLATFORM, the distroless runtime,
 * the image environment of CONTRACT.md, a non-root user, HEALTHCHECK through the binary, the
 * version label from a build arg that matches package.json.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { ROOT } from "./helpers.ts";

interface Instruction {
	op: string;
	args: string;
	stage: number;
}

/** Instructions with continuation lines joined and comments dropped; stage -1 = before FROM. */
function parseDockerfile(text: string): Instruction[] {
	const out: Instruction[] = [];
	let stage = -1;
	let pending = "";
	for (const raw of text.split("\n")) {
		const line = raw.trim();
		if (pending === "" && (line === "" || line.startsWith("#"))) continue;
		if (line.startsWith("#")) continue;
		pending += `${line.replace(/\\$/, "").trim()} `;
		if (line.endsWith("\\")) continue;
		const [op = "", ...rest] = pending.trim().split(/\s+/);
		pending = "";
		if (op.toUpperCase() === "FROM") stage++;
		out.push({ op: op.toUpperCase(), args: rest.join(" "), stage });
	}
	return out;
}

const text = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const ins = parseDockerfile(text);
const froms = ins.filter((i) => i.op === "FROM");
const finalStage = froms.length - 1;
const final = ins.filter((i) => i.stage === finalStage);
const finalOf = (op: string) => final.filter((i) => i.op === op);

describe("Dockerfile", () => {
	test("two stages: bun 1.4.5 on $BUILDPLATFORM, then distroless base-nossl nonroot", () => {
		expect(froms.map((f) => f.args)).toEqual([
			"--platform=$BUILDPLATFORM oven/bun:1.4.5 AS build",
			"gcr.io/distroless/base-nossl-debian12:nonroot",
		]);
		expect(pkg.devDependencies.bun).toBe("1.4.5");
	});

	test("every base image has an explicit tag and none is latest", () => {
		for (const from of froms) {
			const image =
				from.args.split(/\s+/).find((a) => !a.startsWith("--")) ?? "";
			expect(image).toMatch(/^[a-z0-9./-]+:[A-Za-z0-9._-]+$/);
			expect(image).not.toMatch(/:latest$/);
		}
		expect(text).not.toMatch(/:latest\b/);
	});

	test("the build installs from package-lock.json and compiles with the project's flags per TARGETARCH", () => {
		const build = ins.filter((i) => i.stage === 0);
		expect(build.some((i) => i.op === "ARG" && i.args === "TARGETARCH")).toBe(
			true,
		);
		expect(
			build.some(
				(i) => i.op === "COPY" && i.args.includes("package-lock.json"),
			),
		).toBe(true);
		const runs = build.filter((i) => i.op === "RUN").map((i) => i.args);
		expect(runs.some((r) => r.includes("bun install --frozen-lockfile"))).toBe(
			true,
		);
		const compile = runs.find((r) => r.includes("bun build --compile")) ?? "";
		for (const flag of [
			"--minify",
			"--sourcemap",
			"--bytecode",
			"--format=esm",
			"--no-compile-autoload-dotenv",
			"--no-compile-autoload-bunfig",
			"--target=",
		]) {
			expect(compile).toContain(flag);
		}
		expect(compile).toContain("amd64)");
		expect(compile).toContain("arm64)");
		expect(runs.some((r) => /\bstrip\b/.test(r))).toBe(false);
		// The same flags as `bun run build`.
		for (const flag of pkg.scripts.build
			.split(" ")
			.filter((f) => f.startsWith("--") && f !== "--outfile"))
			expect(compile).toContain(flag);
	});

	test("the runtime environment is CONTRACT.md's image column", () => {
		const env = finalOf("ENV")
			.map((i) => i.args)
			.join(" ");
		expect(env).toContain("T3CODE_MCP_CONFIG=/config/t3code.toml");
		expect(env).toContain("T3CODE_MCP_STATE=/data/t3code-mcp.sqlite");
		expect(env).toContain("T3CODE_MCP_HOST=0.0.0.0");
		expect(finalOf("VOLUME").map((i) => i.args)).toEqual(['["/data"]']);
		expect(finalOf("EXPOSE").map((i) => i.args)).toEqual(["8000"]);
	});

	test("non-root user, HEALTHCHECK and ENTRYPOINT use the binary, CMD serve", () => {
		const user = finalOf("USER").at(-1)?.args ?? "";
		expect(user).toBe("65532:65532");
		const health = finalOf("HEALTHCHECK").at(-1)?.args ?? "";
		expect(health).toContain(
			'CMD ["/usr/local/bin/t3code-mcp", "healthcheck"]',
		);
		expect(finalOf("ENTRYPOINT").map((i) => i.args)).toEqual([
			'["/usr/local/bin/t3code-mcp"]',
		]);
		expect(finalOf("CMD").map((i) => i.args)).toEqual(['["serve"]']);
		expect(
			finalOf("COPY").some((i) => i.args.includes("/usr/local/bin/t3code-mcp")),
		).toBe(true);
		expect(
			finalOf("COPY").some(
				(i) =>
					i.args.includes("--chown=65532:65532") && i.args.endsWith("/data"),
			),
		).toBe(true);
	});

	test("OCI labels carry the version build arg, which defaults to package.json's version", () => {
		const global = ins
			.filter((i) => i.stage === -1 && i.op === "ARG")
			.map((i) => i.args);
		expect(global).toContain(`VERSION=${pkg.version}`);
		expect(finalOf("ARG").map((i) => i.args)).toContain("VERSION");
		const labels = finalOf("LABEL")
			.map((i) => i.args)
			.join(" ");
		// biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile variable, literally
		expect(labels).toContain('org.opencontainers.image.version="${VERSION}"');
		expect(labels).toContain('org.opencontainers.image.title="t3code-mcp"');
	});

	test(".dockerignore keeps the context small but keeps what the build copies", () => {
		const ignore = readFileSync(join(ROOT, ".dockerignore"), "utf8")
			.split("\n")
			.map((l) => l.trim());
		for (const entry of ["node_modules", "dist", ".git", ".env", "t3code.toml"])
			expect(ignore).toContain(entry);
		for (const needed of [
			"src",
			"package.json",
			"package-lock.json",
			"bunfig.toml",
			"tsconfig.json",
		])
			expect(ignore).not.toContain(needed);
	});
});
