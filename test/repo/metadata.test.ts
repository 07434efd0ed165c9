/**
 * One repository slug, set once in package.json `repository`: the README and docs/, install.sh,
 * the compose file, the image labels, the release workflow and server.json all name the same
 * GitHub repository and GHCR image. And server.json follows the MCP registry's rules (schema
 * 2025-12-11; the official registry's extra checks where this machine can make them).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const pkg = JSON.parse(read("package.json")) as {
	version: string;
	repository: { type: string; url: string };
};
const slugMatch =
	/^git\+https:\/\/github\.com\/([\w.-]+)\/([\w.-]+?)\.git$/.exec(
		pkg.repository.url,
	);
const [owner, name] = [slugMatch?.[1] ?? "", slugMatch?.[2] ?? ""];
const slug = `${owner}/${name}`;
const github = `https://github.com/${slug}`;
const image = `ghcr.io/${slug}`;

interface ServerJson {
	$schema: string;
	name: string;
	description: string;
	version: string;
	repository: { url: string; source: string };
	websiteUrl?: string;
	remotes?: unknown;
	packages: {
		registryType: string;
		identifier: string;
		runtimeHint?: string;
		transport: { type: string; url: string };
		runtimeArguments?: {
			type: string;
			name?: string;
			value?: string;
			valueHint?: string;
			variables?: Record<string, unknown>;
		}[];
		environmentVariables: {
			name: string;
			description: string;
			isSecret?: boolean;
		}[];
	}[];
}
const server = JSON.parse(read("server.json")) as ServerJson;

/** Every `github.com/<a>/<b>` and `ghcr.io/<a>/<b>` named in `text`. */
function repoMentions(text: string): string[] {
	return [
		...text.matchAll(
			/(?:github\.com|ghcr\.io|raw\.githubusercontent\.com)\/([\w.-]+\/[\w.-]+)/g,
		),
	].map((m) => (m[1] ?? "").replace(/\.+$/, "").replace(/\.git$/, ""));
}

describe("one slug, from package.json", () => {
	test("package.json names the GitHub repository", () => {
		expect(pkg.repository.type).toBe("git");
		expect(slug).toBe("t3code-mcp/t3code-mcp");
	});

	test("no owner placeholder is left in the repository", () => {
		const placeholder = `<${"owner"}>`;
		const offenders: string[] = [];
		const walk = (dir: string) => {
			for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
				const rel = dir ? join(dir, e.name) : e.name;
				if (
					[
						"node_modules",
						".git",
						"dist",
						"data",
						"reports",
						"fixtures",
					].includes(e.name)
				)
					continue;
				if (e.isDirectory()) walk(rel);
				else if (e.isFile() && !/\.(sqlite|lock)$/.test(e.name)) {
					if (read(rel).includes(placeholder)) offenders.push(rel);
				}
			}
		};
		walk("");
		expect(offenders).toEqual([]);
	});

	test("README links the repository, its releases, install.sh and the image", () => {
		const readme = read("README.md");
		const ours = repoMentions(readme).filter((m) => m.endsWith("/t3code-mcp"));
		expect(ours.length).toBeGreaterThan(2);
		expect(new Set(ours)).toEqual(new Set([slug]));
		// The docs pages the README links name the same repository and image, if any.
		const docs = readdirSync(join(ROOT, "docs"))
			.filter((f) => f.endsWith(".md"))
			.map((f) => read(join("docs", f)))
			.join("\n");
		const theirs = repoMentions(docs).filter((m) => m.endsWith("/t3code-mcp"));
		for (const mention of theirs) expect(mention).toBe(slug);
		expect(readme).toContain(
			`https://raw.githubusercontent.com/${slug}/main/install.sh`,
		);
		expect(readme).toContain(`${github}/releases`);
		expect(readme).toContain(`${image}:${pkg.version}`);
	});

	test("install.sh downloads from the repository's releases", () => {
		const script = read("install.sh");
		expect(script).toContain(`repo="\${T3CODE_MCP_REPO:-${slug}}"`);
		expect(new Set(repoMentions(script))).toEqual(new Set([slug]));
	});

	test("the compose file pulls the image and builds from the repository", () => {
		const compose = read("deploy/compose.yaml");
		const doc = Bun.YAML.parse(compose) as {
			services: Record<string, { image: string }>;
		};
		expect(doc.services["t3code-mcp"]?.image).toBe(
			`${image}:\${T3CODE_MCP_VERSION:-${pkg.version}}`,
		);
		expect(new Set(repoMentions(compose))).toEqual(new Set([slug]));
	});

	test("the image labels name the repository and the registry server", () => {
		const dockerfile = read("Dockerfile");
		expect(dockerfile).toContain(`org.opencontainers.image.source="${github}"`);
		expect(dockerfile).toContain(
			`io.modelcontextprotocol.server.name="${server.name}"`,
		);
		const release = read(".github/workflows/release.yml");
		expect(release).toContain(`images: ${image}\n`);
		expect(release).toContain(
			`io.modelcontextprotocol.server.name=${server.name}\n`,
		);
		expect(new Set(repoMentions(dockerfile))).toEqual(new Set([slug]));
	});
});

describe("server.json for the MCP registry", () => {
	test("schema, name, description, exact version and repository", () => {
		expect(server.$schema).toBe(
			"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
		);
		// Reverse-DNS namespace, exactly one "/", the schema's pattern; io.github.OWNER is the
		// namespace a GitHub login may publish under.
		expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
		expect(server.name.split("/")).toHaveLength(2);
		expect(server.name).toBe(`io.github.${owner}/${name}`);
		expect(server.description.length).toBeGreaterThan(0);
		expect(server.description.length).toBeLessThanOrEqual(100);
		expect(server.version).toBe(pkg.version);
		expect(server.version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
		expect(server.repository).toEqual({ url: github, source: "github" });
	});

	test("one OCI package: the versioned GHCR image over streamable HTTP on localhost", () => {
		expect(server.packages).toHaveLength(1);
		const p = server.packages[0] as ServerJson["packages"][number];
		expect(p.registryType).toBe("oci");
		expect(p.identifier).toBe(`${image}:${pkg.version}`);
		// The registry's OCI check refuses `version`, `registryBaseUrl` and `fileSha256` on an
		// OCI package: the identifier alone names the image, its tag carrying the version.
		for (const field of ["version", "registryBaseUrl", "fileSha256"])
			expect(p, field).not.toHaveProperty(field);
		expect(p.transport).toEqual({
			type: "streamable-http",
			url: "http://localhost:{port}/mcp",
		});
		// Every {variable} of the transport URL is defined, as the registry checks.
		const defined = [
			...(p.runtimeArguments ?? []).flatMap((a) => [a.name, a.valueHint]),
			...p.environmentVariables.map((e) => e.name),
		];
		for (const [, variable] of p.transport.url.matchAll(/\{(\w+)\}/g))
			expect(defined).toContain(variable);
		const publish = p.runtimeArguments?.find((a) => a.valueHint === "port");
		expect(publish?.value).toBe("127.0.0.1:{port}:8000");
	});

	test("tokens and secrets are marked isSecret; names are the contract's", () => {
		const p = server.packages[0] as ServerJson["packages"][number];
		const env = new Map(p.environmentVariables.map((e) => [e.name, e]));
		for (const secret of [
			"T3CODE_MCP_TOKEN",
			"T3CODE_MCP_HOOK_TOKEN",
			"T3CODE_MCP_HOOK_SECRET",
			"T3CODE_MCP_HOOK_URL",
			"T3_MAC_TOKEN",
		])
			expect(env.get(secret)?.isSecret, secret).toBe(true);
		for (const e of p.environmentVariables) {
			expect(e.description.length, e.name).toBeGreaterThan(0);
			if (/TOKEN|SECRET/.test(e.name)) expect(e.isSecret, e.name).toBe(true);
		}
		// The machine token named is the one of the example config.
		expect(read("t3code.example.toml")).toContain('token_env = "T3_MAC_TOKEN"');
	});

	test("no remotes: the server is self-hosted, a registry remote must be a public URL", () => {
		expect(server.remotes).toBeUndefined();
	});
});
