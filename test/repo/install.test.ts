/**
 * install.sh against a fake GitHub release on loopback (Bun.serve): the right build for the
 * OS/CPU (uname is stubbed on PATH), a pinned or the latest version, checksum verification
 * (a tampered download installs nothing), the install directory, and T3CODE_MCP_REPO for forks.
 * Runs under /bin/sh, as `curl … | sh` does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToExit } from "../helpers/process.ts";

const ROOT = join(import.meta.dir, "../..");
const INSTALL = join(ROOT, "install.sh");
const TARGETS = ["linux-x64", "linux-arm64", "darwin-arm64"];

/** A stand-in binary: a script that prints its version and build. */
const fakeBinary = (version: string, target: string) =>
	`#!/bin/sh\necho "${version} ${target}"\n`;
const sha256 = (text: string) =>
	createHash("sha256").update(text).digest("hex");

/** version → asset name → content; SHA256SUMS is computed unless `tampered`. */
function release(version: string, tampered = false): Map<string, string> {
	const files = new Map<string, string>();
	for (const t of TARGETS) files.set(`t3code-mcp-${t}`, fakeBinary(version, t));
	const sums = [...files].map(([name, body]) => `${sha256(body)}  ${name}`);
	if (tampered) files.set("t3code-mcp-linux-x64", "#!/bin/sh\necho evil\n");
	files.set("SHA256SUMS", `${sums.join("\n")}\n`);
	return files;
}

const RELEASES = new Map([
	["0.1.0", release("0.1.0")],
	["0.2.0", release("0.2.0")],
	["0.0.9", release("0.0.9", true)],
]);
const LATEST = "0.2.0";

let server: ReturnType<typeof Bun.serve>;
let dir: string;
const requests: string[] = [];

beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), "t3code-mcp-install-"));
	server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch(req) {
			const { pathname } = new URL(req.url);
			requests.push(pathname);
			// GitHub answers /releases/latest/download/<file> with a redirect to the tagged one.
			const latest = /^\/releases\/latest\/download\/([^/]+)$/.exec(pathname);
			if (latest)
				return Response.redirect(
					`/releases/download/v${LATEST}/${latest[1]}`,
					302,
				);
			const tagged = /^\/releases\/download\/v([^/]+)\/([^/]+)$/.exec(pathname);
			const body =
				tagged && RELEASES.get(tagged[1] ?? "")?.get(tagged[2] ?? "");
			return body === undefined
				? new Response("Not Found", { status: 404 })
				: new Response(body);
		},
	});
});

afterAll(() => {
	server.stop(true);
	rmSync(dir, { recursive: true, force: true });
});

let runs = 0;

/** A fresh HOME and a PATH whose `uname` reports `os`/`arch`; returns the run and its HOME. */
async function install(
	args: string[],
	options: {
		os?: string;
		arch?: string;
		env?: Record<string, string>;
		/** Replace curl with a stub that records its arguments and fails (no network). */
		stubCurl?: boolean;
	} = {},
) {
	const home = join(dir, `run-${++runs}`);
	const stubs = join(home, "stubs");
	mkdirSync(stubs, { recursive: true });
	const uname = join(stubs, "uname");
	writeFileSync(
		uname,
		`#!/bin/sh\ncase "$1" in -s) echo ${options.os ?? "Linux"} ;; -m) echo ${options.arch ?? "x86_64"} ;; *) echo ${options.os ?? "Linux"} ;; esac\n`,
	);
	chmodSync(uname, 0o755);
	if (options.stubCurl) {
		const curl = join(stubs, "curl");
		writeFileSync(
			curl,
			`#!/bin/sh\necho "$@" >> "${home}/curl.log"\nexit 22\n`,
		);
		chmodSync(curl, 0o755);
	}
	const finished = await runToExit(["/bin/sh", INSTALL, ...args], {
		cwd: home,
		env: {
			PATH: `${stubs}:/usr/local/bin:/usr/bin:/bin`,
			HOME: home,
			T3CODE_MCP_RELEASES_URL: `http://127.0.0.1:${server.port}/releases`,
			...options.env,
		},
		timeout: 30_000,
	});
	return { ...finished, home, stubs };
}

const installed = (path: string) =>
	existsSync(path) ? readFileSync(path, "utf8") : undefined;

// install.sh downloads with curl or wget; .ci/run installs curl where it can.
const downloader = Bun.which("curl") ?? Bun.which("wget");

describe.skipIf(!downloader)("install.sh", () => {
	test("installs the given version for linux-x64 into ~/.local/bin after checking SHA256SUMS", async () => {
		const run = await install(["--version", "0.1.0"]);
		expect(run.code, run.stderr).toBe(0);
		const bin = join(run.home, ".local/bin/t3code-mcp");
		expect(installed(bin)).toBe(fakeBinary("0.1.0", "linux-x64"));
		expect(run.stderr).toContain(
			`Installed t3code-mcp 0.1.0 linux-x64 to ${bin}`,
		);
		expect(run.stderr).toContain(sha256(fakeBinary("0.1.0", "linux-x64")));
		// Not on PATH: it says how to add it.
		expect(run.stderr).toContain(
			`export PATH="${join(run.home, ".local/bin")}:$PATH"`,
		);
		expect(run.stdout).toBe("");
	});

	test("without a version, installs the latest release (following the redirect)", async () => {
		const run = await install([]);
		expect(run.code, run.stderr).toBe(0);
		expect(installed(join(run.home, ".local/bin/t3code-mcp"))).toBe(
			fakeBinary(LATEST, "linux-x64"),
		);
		expect(requests).toContain("/releases/latest/download/SHA256SUMS");
	});

	test("picks the build for the OS and CPU, into a given directory", async () => {
		for (const [os, arch, target] of [
			["Linux", "aarch64", "linux-arm64"],
			["Linux", "amd64", "linux-x64"],
			["Darwin", "arm64", "darwin-arm64"],
		] as const) {
			const run = await install(["--version=v0.1.0", "--dir", "opt/bin"], {
				os,
				arch,
			});
			expect(run.code, run.stderr).toBe(0);
			expect(installed(join(run.home, "opt/bin/t3code-mcp"))).toBe(
				fakeBinary("0.1.0", target),
			);
		}
		const env = await install([], {
			env: { T3CODE_MCP_VERSION: "0.1.0", T3CODE_MCP_INSTALL_DIR: "x" },
		});
		expect(env.code, env.stderr).toBe(0);
		expect(installed(join(env.home, "x/t3code-mcp"))).toBe(
			fakeBinary("0.1.0", "linux-x64"),
		);
	});

	test("a tampered download fails with both checksums and installs nothing", async () => {
		const run = await install(["--version", "0.0.9"]);
		expect(run.code).toBe(1);
		expect(run.stderr).toContain("checksum mismatch for t3code-mcp-linux-x64");
		expect(run.stderr).toContain(sha256(fakeBinary("0.0.9", "linux-x64")));
		expect(run.stderr).toContain(sha256("#!/bin/sh\necho evil\n"));
		expect(run.stderr).toContain("nothing installed");
		expect(existsSync(join(run.home, ".local/bin"))).toBe(false);
	});

	test("a missing release, an unsupported platform or a bad argument is a clear error", async () => {
		const missing = await install(["--version", "9.9.9"]);
		expect(missing.code).toBe(1);
		expect(missing.stderr).toContain("could not download http://127.0.0.1:");
		expect(missing.stderr).toContain(
			"/releases/download/v9.9.9/t3code-mcp-linux-x64",
		);
		const intelMac = await install([], { os: "Darwin", arch: "x86_64" });
		expect(intelMac.code).toBe(1);
		expect(intelMac.stderr).toContain("no build for darwin-x64");
		expect(intelMac.stderr).toContain("ghcr.io/t3code-mcp/t3code-mcp");
		const windows = await install([], { os: "MINGW64_NT-10.0" });
		expect(windows.stderr).toContain("no build for OS 'MINGW64_NT-10.0'");
		const bad = await install(["--version", "latest-ish"]);
		expect(bad.code).toBe(1);
		expect(bad.stderr).toContain("--version must look like 1.2.3");
		const unknown = await install(["--prefix", "/usr"]);
		expect(unknown.stderr).toContain("unknown argument '--prefix'");
		for (const r of [missing, intelMac, windows, bad, unknown])
			expect(existsSync(join(r.home, ".local/bin"))).toBe(false);
	});

	test("T3CODE_MCP_REPO points the download at a fork's releases", async () => {
		// A curl stub records the URL instead of reaching GitHub.
		const fork = "https://github.com/someone/t3code-mcp-fork/releases";
		const run = await install(["--version", "0.1.0"], {
			env: {
				T3CODE_MCP_REPO: "someone/t3code-mcp-fork",
				T3CODE_MCP_RELEASES_URL: "",
			},
			stubCurl: true,
		});
		expect(run.code).toBe(1);
		expect(readFileSync(join(run.home, "curl.log"), "utf8")).toContain(
			`${fork}/download/v0.1.0/t3code-mcp-linux-x64`,
		);
		expect(run.stderr).toContain(`could not download ${fork}/download/v0.1.0/`);
		const upstream = await install([], {
			env: { T3CODE_MCP_RELEASES_URL: "" },
			stubCurl: true,
		});
		expect(readFileSync(join(upstream.home, "curl.log"), "utf8")).toContain(
			"https://github.com/t3code-mcp/t3code-mcp/releases/latest/download/t3code-mcp-linux-x64",
		);
		const bad = await install([], { env: { T3CODE_MCP_REPO: "nofork" } });
		expect(bad.stderr).toContain("T3CODE_MCP_REPO must be owner/name");
	});
});
