/**
 * The container's runtime layout without a Docker engine: the built binary in a root that holds
 * only what gcr.io/distroless/base-nossl-debian12:nonroot has (the glibc files `ldd` names,
 * /etc/passwd with nonroot 65532, /etc/group, /tmp, ca-certificates), run with the image's
 * environment as uid 65532 via `unshare --mount` + `chroot --userspec`, with /proc mounted as
 * Docker does. Needs root and unshare; skips with the reason otherwise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	chmodSync,
	chownSync,
	copyFileSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { type Sim, startSim } from "../../src/sim/index.ts";
import {
	cleanEnv,
	ensureBinary,
	freePort,
	simConfig,
	spawnBinary,
	waitForHealthz,
} from "./helpers.ts";

const NONROOT = 65532;

function whyNot(): string | undefined {
	if (process.platform !== "linux")
		return `needs Linux (this is ${process.platform})`;
	if (process.getuid?.() !== 0)
		return "needs root for unshare --mount and chroot";
	for (const tool of ["unshare", "chroot", "ldd", "mount"]) {
		if (Bun.which(tool) === null) return `${tool} is not installed`;
	}
	const probe = Bun.spawnSync(
		[
			"unshare",
			"--mount",
			"--fork",
			"sh",
			"-c",
			"mount -t tmpfs none /mnt 2>/dev/null || mount -t proc proc /proc",
		],
		{ stderr: "pipe" },
	);
	if (probe.exitCode !== 0)
		return `unshare --mount does not work here: ${probe.stderr.toString().trim()}`;
	return undefined;
}

const skipReason = whyNot();
if (skipReason) console.warn(`SKIP distroless-layout test: ${skipReason}`);

/** The shared objects (and loader) `ldd` reports for the binary. */
function neededLibraries(binary: string): string[] {
	const out = Bun.spawnSync(["ldd", binary]).stdout.toString();
	const libs = new Set<string>();
	for (const line of out.split("\n")) {
		const arrow = line.match(/=>\s+(\/\S+)/);
		const direct = line.match(/^\s*(\/\S+)\s+\(/);
		const path = arrow?.[1] ?? direct?.[1];
		if (path) libs.add(path);
	}
	return [...libs];
}

let sim: Sim;
let root: string;
let work: string;
let libs: string[] = [];

function put(path: string, content: string | Buffer, mode = 0o644) {
	const target = join(root, path);
	mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
	writeFileSync(target, content, { mode });
}

describe.skipIf(skipReason !== undefined)(
	"distroless layout (chroot as 65532)",
	() => {
		beforeAll(async () => {
			const binary = await ensureBinary();
			sim = await startSim({
				stepMs: 5,
				projects: [{ title: "demo", workspaceRoot: "/srv/t3/demo" }],
			});
			work = mkdtempSync(join(tmpdir(), "t3code-mcp-distroless-"));
			root = join(work, "root");
			mkdirSync(root, { mode: 0o755 });
			chmodSync(work, 0o755);
			// What base-nossl-debian12:nonroot ships that matters to us.
			put(
				"etc/passwd",
				`root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`,
			);
			put("etc/group", `root:x:0:\nnobody:x:65534:\nnonroot:x:${NONROOT}:\n`);
			put(
				"etc/nsswitch.conf",
				"passwd: files\ngroup: files\nhosts: files dns\n",
			);
			if (existsSync("/etc/ssl/certs/ca-certificates.crt"))
				put(
					"etc/ssl/certs/ca-certificates.crt",
					readFileSync("/etc/ssl/certs/ca-certificates.crt"),
				);
			mkdirSync(join(root, "tmp"), { recursive: true });
			chmodSync(join(root, "tmp"), 0o1777);
			mkdirSync(join(root, "home/nonroot"), { recursive: true });
			chownSync(join(root, "home/nonroot"), NONROOT, NONROOT);
			mkdirSync(join(root, "proc"));
			libs = neededLibraries(binary);
			for (const lib of libs) {
				mkdirSync(dirname(join(root, lib)), { recursive: true, mode: 0o755 });
				copyFileSync(lib, join(root, lib)); // follows symlinks: the real file lands at the path
			}
			// The image: binary, /config (mounted in compose), /data owned by nonroot.
			put("usr/local/bin/t3code-mcp", readFileSync(binary), 0o755);
			put("config/t3code.toml", simConfig(sim.url));
			mkdirSync(join(root, "data"));
			chownSync(join(root, "data"), NONROOT, NONROOT);
		}, 120_000);

		afterAll(async () => {
			await sim?.stop();
			if (work) rmSync(work, { recursive: true, force: true });
		});

		/** `unshare --mount`, mount /proc in the root, record the pid, then chroot as nonroot. */
		function inChroot(
			args: string[],
			env: Record<string, string>,
			pidFile: string,
		) {
			const script =
				'mount -t proc proc "$1/proc" && echo $$ > "$2" && shift 2 && exec chroot --userspec=65532:65532 "$ROOT_DIR" /usr/local/bin/t3code-mcp "$@"';
			return spawnBinary(args, {
				cwd: "/",
				env: { ...env, ROOT_DIR: root },
				binary: [
					"unshare",
					"--mount",
					"--fork",
					"sh",
					"-c",
					script,
					"sh",
					root,
					pidFile,
				],
			});
		}

		test("the binary needs only glibc", () => {
			const names = libs.map((l) => l.split("/").at(-1));
			expect(names.length).toBeGreaterThan(0);
			for (const name of names)
				expect(name).toMatch(
					/^(libc|libm|libpthread|libdl|ld-linux[-a-z0-9_]*|librt)\.so\.\d+$/,
				);
		});

		test("serves /healthz as uid 65532 with the image's env, writes /data, answers healthcheck, stops on SIGTERM with 0", async () => {
			const port = freePort();
			// ENV of the Dockerfile, plus what compose passes.
			const env = cleanEnv({
				T3CODE_MCP_CONFIG: "/config/t3code.toml",
				T3CODE_MCP_STATE: "/data/t3code-mcp.sqlite",
				T3CODE_MCP_HOST: "0.0.0.0",
				T3CODE_MCP_PORT: String(port),
				T3CODE_MCP_LOG_LEVEL: "warn",
				T3_SIM_TOKEN: sim.token,
				PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				HOME: "/home/nonroot",
			});
			const pidFile = join(work, "serve.pid");
			const server = inChroot(["serve"], env, pidFile);
			const started = performance.now();
			const { body } = await waitForHealthz(`http://127.0.0.1:${port}`, {
				proc: server.proc,
				timeoutMs: 15_000,
			});
			console.log(
				`distroless: first /healthz 200 after ${(performance.now() - started).toFixed(0)} ms (incl. unshare + mount)`,
			);
			expect(body.version).toBe(pkg.version);

			const pid = Number(readFileSync(pidFile, "utf8").trim());
			const status = readFileSync(`/proc/${pid}/status`, "utf8");
			expect(status).toMatch(/^Uid:\s+65532\s+65532\s+65532\s+65532$/m);
			expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toStartWith(
				"/usr/local/bin/t3code-mcp",
			);

			// The machine behind it comes online from inside the chroot.
			const deadline = Date.now() + 10_000;
			let state: string | undefined;
			while (Date.now() < deadline && state !== "online") {
				const h = (await (
					await fetch(`http://127.0.0.1:${port}/healthz`)
				).json()) as { machines: Record<string, { state: string }> };
				state = h.machines.sim?.state;
				await Bun.sleep(20);
			}
			expect(state).toBe("online");

			const db = join(root, "data/t3code-mcp.sqlite");
			expect(existsSync(db)).toBe(true);
			expect(statSync(db).uid).toBe(NONROOT);

			// HEALTHCHECK CMD ["/usr/local/bin/t3code-mcp", "healthcheck"] inside the same layout.
			const check = inChroot(
				["healthcheck"],
				env,
				join(work, "healthcheck.pid"),
			);
			expect(await check.proc.exited).toBe(0);

			process.kill(pid, "SIGTERM");
			const code = await server.proc.exited;
			expect(code).toBe(0);
			// A clean close checkpoints the WAL.
			expect(existsSync(`${db}-wal`)).toBe(false);
		}, 60_000);
	},
);
