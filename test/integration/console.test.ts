/**
 * The console (CONTRACT.md "Console") end to end in a real headless Chromium against the
 * simulator: sign-in and its cookie, the machine, a question dispatched by another client
 * appearing without a reload, an approver approving from the thread page, a non-approver
 * offered no button and refused without the CSRF token, a hostile title shown as text, 360 px,
 * sign-out and a token change ending the session, and the audit's `via: console`.
 * Screenshots for docs/people.md are written only with UPDATE_SCREENSHOTS=1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { Browser, Page } from "puppeteer-core";
import type { AppConfig } from "../../src/config/types.ts";
import { createApp } from "../../src/http/app.ts";
import { auditRows } from "../helpers/audit.ts";
import {
	chromiumPath,
	launchBrowser,
	mainText,
	noChromiumMessage,
	submit,
} from "../helpers/browser.ts";
import { consoleCookie } from "../helpers/console.ts";
import {
	callTool,
	connectAs,
	type Stack,
	startStack,
	testClient,
	until,
	untilMachinesOnline,
	untilRunStatus,
} from "../helpers/stack.ts";

const SHOTS = join(import.meta.dir, "../../docs/images");
const TOKENS = {
	agent: "agent-token-0123456789ab",
	boss: "boss-token-0123456789abc",
	watcher: "watcher-token-012345678",
	ops: "ops-token-0123456789abcdef",
	outsider: "outsider-token-0123456789",
};
const XSS_TITLE = "<img src=x onerror=alert(1)>";
const chromium = chromiumPath();

let stack: Stack;
let agent: Client;
let base: string;

beforeAll(async () => {
	stack = await startStack({
		clients: [
			testClient("agent", TOKENS.agent, {
				access: "approval-required",
				approve: false,
			}),
			testClient("boss", TOKENS.boss, { access: "read-only", approve: true }),
			testClient("watcher", TOKENS.watcher, {
				access: "read-only",
				approve: false,
			}),
			testClient("ops", TOKENS.ops),
			testClient("outsider", TOKENS.outsider, {
				access: "read-only",
				machines: ["elsewhere-*"],
			}),
		],
	});
	base = new URL(stack.server.mcpUrl).origin;
	agent = await connectAs(stack, TOKENS.agent);
	await untilMachinesOnline(agent);
});

afterAll(async () => {
	await agent?.close();
	await stack?.stop();
});

async function dispatch(prompt: string, title: string): Promise<string> {
	const done = await callTool<{ thread_id: string }>(agent, "t3_dispatch", {
		machine: "demo",
		project: "demo",
		prompt,
		title,
	});
	expect(done.isError, done.text).toBe(false);
	return done.data.thread_id;
}

async function pendingKind(threadId: string): Promise<string | null> {
	const read = await callTool<{ question: { kind: string } | null }>(
		agent,
		"t3_thread",
		{ thread_id: threadId },
	);
	return read.data.question?.kind ?? null;
}

/** Until the thread's pending question is of this kind (null: none pending). */
const untilPending = (threadId: string, kind: string | null, what: string) =>
	until(async () => (await pendingKind(threadId)) === kind, 10_000, what);

const form = (body: string) => ({
	method: "POST",
	headers: { "content-type": "application/x-www-form-urlencoded" },
	body,
});

describe("without a browser", () => {
	test("/ redirects to /console, which asks to sign in", async () => {
		const root = await fetch(`${base}/`, { redirect: "manual" });
		expect(root.status).toBe(302);
		expect(root.headers.get("location")).toBe("/console");
		const console = await fetch(`${base}/console`, { redirect: "manual" });
		expect(console.status).toBe(303);
		expect(console.headers.get("location")).toBe("/console/sign-in");
	});

	test("a wrong token is 401 and audited; a session cookie is no bearer on /mcp", async () => {
		const wrong = await fetch(
			`${base}/console/sign-in`,
			form("token=not-a-token-of-anyone-here"),
		);
		expect(wrong.status).toBe(401);
		expect(await wrong.text()).not.toContain("not-a-token-of-anyone-here");
		const signIn = await fetch(`${base}/console/sign-in`, {
			...form(`token=${TOKENS.watcher}`),
			redirect: "manual",
		});
		expect(signIn.status).toBe(303);
		const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
		const mcp = await fetch(stack.server.mcpUrl, {
			method: "POST",
			headers: {
				cookie: cookie ?? "",
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
			},
			body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
		});
		expect(mcp.status).toBe(401);
		expect(
			auditRows(stack).some(
				(r) =>
					r.tool === "console_sign_in" &&
					r.result === "unauthorized" &&
					r.via === "console",
			),
		).toBe(true);
	});

	/** A session cookie of the client with this token (signed in without a browser). */
	const cookieOf = (token: string) => consoleCookie(base, token);
	const csrfIn = (html: string) =>
		/name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
	/** A console page's HTML as the session with this cookie gets it. */
	const pageAs = async (cookie: string, path = "/console") =>
		(await fetch(`${base}${path}`, { headers: { cookie } })).text();
	/** Replays the dead outbox events as this session, with the CSRF token of its `page`. */
	const replayAs = (cookie: string, page: string) =>
		fetch(`${base}/console/outbox/replay`, {
			...form(`csrf=${encodeURIComponent(csrfIn(page))}`),
			headers: {
				cookie,
				"content-type": "application/x-www-form-urlencoded",
			},
			redirect: "manual",
		});

	test("full access sees the outbox and may replay dead events; read-only neither", async () => {
		const ops = await cookieOf(TOKENS.ops);
		const opsPage = await pageAs(ops);
		expect(opsPage).toContain('id="h-outbox"');
		const replay = await replayAs(ops, opsPage);
		expect(replay.status).toBe(303);

		const boss = await cookieOf(TOKENS.boss);
		const bossPage = await pageAs(boss);
		expect(bossPage).not.toContain('id="h-outbox"');
		const refused = await replayAs(boss, bossPage);
		expect(refused.status).toBe(403);
		const replays = auditRows(stack).filter((r) => r.tool === "outbox_replay");
		expect(replays).toContainEqual(
			expect.objectContaining({ client: "ops", result: "ok", via: "console" }),
		);
		expect(replays).toContainEqual(
			expect.objectContaining({
				client: "boss",
				result: "capability_denied",
				via: "console",
			}),
		);
	});

	test("T3 text holding a configured secret is masked on every page", async () => {
		const secret = stack.sim().token;
		const threadId = await dispatch("say hello", `leak ${secret} here`);
		const boss = await cookieOf(TOKENS.boss);
		let overview = "";
		await until(
			async () => {
				overview = await pageAs(boss);
				return overview.includes(threadId);
			},
			10_000,
			"the thread on the console",
		);
		const thread = await pageAs(boss, `/console/threads/${threadId}`);
		for (const page of [overview, thread]) {
			expect(page).not.toContain(secret);
			expect(page).toContain("leak [redacted] here");
		}
	});

	test("a session acts as its client as configured now: a reload that narrows its rights applies at the next request", async () => {
		const ops = await cookieOf(TOKENS.ops);
		const page = () => pageAs(ops);
		const setAccess = async (access: "read-only" | "full-access") => {
			const next = structuredClone(stack.server.services.config) as AppConfig;
			for (const client of next.clients)
				if (client.name === "ops") client.access = access;
			await stack.server.services.reload(next);
		};
		expect(await page()).toContain('id="h-outbox"');
		await setAccess("read-only");
		try {
			const narrowed = await page();
			expect(narrowed).toContain("Sign out");
			expect(narrowed).not.toContain('id="h-outbox"');
		} finally {
			await setAccess("full-access");
		}
		expect(await page()).toContain('id="h-outbox"');
	});

	test("a client's reach is the console's: no machine, no thread, no live row outside it", async () => {
		const outsider = await cookieOf(TOKENS.outsider);
		const boss = await cookieOf(TOKENS.boss);
		const stream = async (cookie: string) => {
			const response = await fetch(`${base}/console/events`, {
				headers: { cookie },
			});
			const got: string[] = [];
			const reader = (response.body as ReadableStream<Uint8Array>).getReader();
			const decoder = new TextDecoder();
			void (async () => {
				for (;;) {
					const { value, done } = await reader.read();
					if (done) break;
					got.push(decoder.decode(value));
				}
			})().catch(() => {});
			return { got, close: () => reader.cancel() };
		};
		const outside = await stream(outsider);
		const inside = await stream(boss);
		try {
			const threadId = await dispatch("say hello", "Out of reach");
			await until(
				() => inside.got.join("").includes(threadId),
				10_000,
				"the row on the boss's stream",
			);
			// Both streams are fed in the same pass: the outsider's would have it by now.
			expect(outside.got.join("")).not.toContain(threadId);
			const page = await pageAs(outsider);
			expect(page).not.toContain(threadId);
			expect(page).not.toContain('data-machine="demo"');
			const thread = await fetch(`${base}/console/threads/${threadId}`, {
				headers: { cookie: outsider },
			});
			expect(thread.status).toBe(404);
			expect(await thread.text()).not.toContain("Out of reach");
		} finally {
			await outside.close();
			await inside.close();
		}
	});

	test("a form too large is 413, read no further", async () => {
		const big = await fetch(
			`${base}/console/sign-in`,
			form(`token=${"x".repeat(70_000)}`),
		);
		expect(big.status).toBe(413);
	});

	test("a POST from a foreign Origin is 403", async () => {
		const response = await fetch(`${base}/console/sign-in`, {
			...form(`token=${TOKENS.boss}`),
			headers: {
				"content-type": "application/x-www-form-urlencoded",
				origin: "http://evil.example",
			},
		});
		expect(response.status).toBe(403);
	});
});

describe("sign-in on another server", () => {
	test("Secure under an https public_url, console_session_hours long; failed tries limited per address: the eleventh in 15 minutes is 429, even with a right token", async () => {
		const own = await startStack({
			clients: [testClient("solo", "solo-token-0123456789abc")],
			server: {
				publicUrl: "https://t3mcp.example.ts.net",
				consoleSessionHours: 2,
			},
		});
		try {
			const url = new URL(own.server.mcpUrl).origin;
			const ok = await fetch(`${url}/console/sign-in`, {
				...form("token=solo-token-0123456789abc"),
				redirect: "manual",
			});
			expect(ok.status).toBe(303);
			const cookie = ok.headers.get("set-cookie") ?? "";
			expect(cookie).toContain("Secure");
			expect(cookie).toContain("HttpOnly");
			expect(cookie).toContain("SameSite=Lax");
			expect(cookie).toContain("Max-Age=7200");
			for (let i = 0; i < 10; i++)
				expect(
					(
						await fetch(
							`${url}/console/sign-in`,
							form("token=wrong-token-000000000"),
						)
					).status,
				).toBe(401);
			const held = await fetch(
				`${url}/console/sign-in`,
				form("token=solo-token-0123456789abc"),
			);
			expect(held.status).toBe(429);
			expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
		} finally {
			await own.stop();
		}
	});
});

describe("without clients or T3CODE_MCP_TOKEN", () => {
	test("served on a loopback listener without sign-in; 404 on any other", async () => {
		const open = await startStack();
		try {
			const url = new URL(open.server.mcpUrl).origin;
			const page = await fetch(`${url}/console`, { redirect: "manual" });
			expect(page.status).toBe(200);
			expect(page.headers.get("set-cookie")).toContain("HttpOnly");
			expect(await page.text()).not.toContain("Sign out");
			// The same server as it would answer listening on every interface.
			const { services } = open.server;
			const everywhere = createApp({
				...services,
				config: {
					...services.config,
					server: { ...services.config.server, host: "0.0.0.0" },
				},
			});
			for (const path of ["/", "/console", "/console/sign-in"])
				expect(
					(await everywhere.request(`http://t3code-mcp:8000${path}`)).status,
				).toBe(404);
		} finally {
			await open.stop();
		}
	});
});

describe.skipIf(chromium === undefined)("in a real browser", () => {
	let browser: Browser;
	const dialogs: string[] = [];

	beforeAll(async () => {
		browser = await launchBrowser(chromium as string);
	});
	afterAll(async () => {
		await browser?.close();
	});

	/** A page of its own browser context (its own cookies), signed in with `token`. */
	async function signedIn(token: string, javaScript = true): Promise<Page> {
		const context = await browser.createBrowserContext();
		const page = await context.newPage();
		await page.setJavaScriptEnabled(javaScript);
		page.on("dialog", async (dialog) => {
			dialogs.push(dialog.message());
			await dialog.dismiss();
		});
		await page.goto(`${base}/console`, { waitUntil: "load" });
		expect(new URL(page.url()).pathname).toBe("/console/sign-in");
		await page.type("#token", token);
		await submit(page, "button[type=submit]");
		expect(new URL(page.url()).pathname).toBe("/console");
		return page;
	}

	const liveOpen = (page: Page) =>
		page.waitForFunction(
			"window.t3console && window.t3console.state === 'open'",
		);

	const fits = async (page: Page) => {
		const widths = (await page.evaluate(
			"({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })",
		)) as { scroll: number; client: number };
		expect(widths.scroll).toBeLessThanOrEqual(widths.client);
	};

	test("signing in: an HttpOnly SameSite=Lax session, the machine, the page's headers", async () => {
		const page = await signedIn(TOKENS.boss);
		const cookies = await page.browserContext().cookies();
		const session = cookies.find((c) => c.name === "t3mcp_console");
		expect(session?.httpOnly).toBe(true);
		expect(session?.sameSite).toBe("Lax");
		const response = await page.reload({ waitUntil: "load" });
		const headers = response?.headers() ?? {};
		expect(headers["content-security-policy"]).toContain(
			"frame-ancestors 'none'",
		);
		expect(headers["x-content-type-options"]).toBe("nosniff");
		expect(headers["referrer-policy"]).toBe("no-referrer");
		expect(
			await page.$eval("[data-machine=demo]", (m) => m.textContent ?? ""),
		).toContain("online");
		await page.browserContext().close();
	});

	test("a question dispatched by another client appears without a reload", async () => {
		const page = await signedIn(TOKENS.boss);
		await page.setViewport({ width: 360, height: 740 });
		await liveOpen(page);
		await page.evaluate("window.__kept = 'still the same page'");
		const threadId = await dispatch("ask me", "Pick a colour");
		const row = `ul[data-section=attention] [data-thread="${threadId}"]`;
		await page.waitForSelector(row, { timeout: 10_000 });
		expect(await page.$eval(row, (r) => r.textContent ?? "")).toContain(
			"waits: question",
		);
		expect(await page.evaluate("window.__kept")).toBe("still the same page");
		await fits(page);
		await page.browserContext().close();
	});

	test("a hostile title renders as text and opens no dialog", async () => {
		const threadId = await dispatch(`say hello ${XSS_TITLE}`, XSS_TITLE);
		const page = await signedIn(TOKENS.boss);
		await page.setViewport({ width: 360, height: 740 });
		await page.waitForSelector(`[data-thread="${threadId}"] .title`);
		expect(
			await page.$eval(
				`[data-thread="${threadId}"] .title`,
				(t) => t.textContent ?? "",
			),
		).toBe(XSS_TITLE);
		expect(await page.$$eval("main img", (imgs) => imgs.length)).toBe(0);
		await page.goto(`${base}/console/threads/${threadId}`, {
			waitUntil: "load",
		});
		expect(await page.$eval("h1", (h) => h.textContent ?? "")).toBe(XSS_TITLE);
		// The message quoting it too (T3's text, shown as text).
		expect(await mainText(page)).toContain(`say hello ${XSS_TITLE}`);
		expect(await page.$$eval("main img", (imgs) => imgs.length)).toBe(0);
		await fits(page);
		expect(dialogs).toEqual([]);
		await page.browserContext().close();
	});

	test("a non-approver sees no approve button and its forged POSTs are 403; the approver approves and the run completes", async () => {
		const threadId = await dispatch("run a command", "List the files");
		await untilPending(threadId, "approval", "the approval");
		const thread = `${base}/console/threads/${threadId}`;

		const agentPage = await signedIn(TOKENS.agent);
		await agentPage.goto(thread, { waitUntil: "load" });
		expect(await agentPage.$$("button[name=decision]")).toHaveLength(0);
		expect(await mainText(agentPage)).toContain("approve right");
		// The decision form posted without the CSRF token: 403, nothing sent.
		const forged = (await agentPage.evaluate(
			`fetch(${JSON.stringify(`${thread}/decide`)}, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "decision=accept" }).then((r) => r.status)`,
		)) as number;
		expect(forged).toBe(403);
		// With its own CSRF token: refused for its rights, as t3_answer would be.
		const csrf = await agentPage.$eval(
			"input[name=csrf]",
			(i) => (i as unknown as { value: string }).value,
		);
		const refused = (await agentPage.evaluate(
			`fetch(${JSON.stringify(`${thread}/decide`)}, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "decision=accept&csrf=" + encodeURIComponent(${JSON.stringify(csrf)}) }).then((r) => r.status)`,
		)) as number;
		expect(refused).toBe(403);
		expect(await pendingKind(threadId)).toBe("approval");
		await agentPage.browserContext().close();

		const bossPage = await signedIn(TOKENS.boss);
		await bossPage.setViewport({ width: 360, height: 740 });
		await bossPage.goto(thread, { waitUntil: "load" });
		await fits(bossPage);
		await submit(bossPage, "button[name=decision][value=accept]");
		expect(new URL(bossPage.url()).pathname).toBe(
			`/console/threads/${threadId}`,
		);
		expect(await mainText(bossPage)).toContain("Sent: accept");
		// The thread page follows the run by itself: no reload, the notice kept.
		await bossPage.evaluate("window.__kept = 'the same page'");
		await bossPage.waitForFunction(
			"document.querySelector('h1 + .notice, .notice[role=status]') !== null && document.querySelector('.card .badge') && document.querySelector('.card .badge').textContent === 'completed'",
			{ timeout: 10_000 },
		);
		expect(await bossPage.evaluate("window.__kept")).toBe("the same page");
		await untilRunStatus(agent, threadId, "completed", "the run to complete");
		await bossPage.browserContext().close();

		const rows = auditRows(stack).filter((r) => r.thread_id === threadId);
		expect(rows).toContainEqual(
			expect.objectContaining({
				client: "boss",
				tool: "t3_answer",
				result: "ok",
				detail: "accept",
				via: "console",
				machine: "demo",
			}),
		);
		expect(rows).toContainEqual(
			expect.objectContaining({
				client: "agent",
				tool: "t3_answer",
				result: "approval_denied",
				via: "console",
			}),
		);
	});

	test("a client above read-only answers a question and interrupts a run from the console", async () => {
		const asked = await dispatch("ask me", "Pick the colour");
		await untilPending(asked, "user_input", "the question");
		const page = await signedIn(TOKENS.agent);
		await page.goto(`${base}/console/threads/${asked}`, { waitUntil: "load" });
		await page.click("input[name='q:color'][value='Blue']");
		await submit(page, "form[action$='/answer'] button[type=submit]");
		expect(await mainText(page)).toContain("Answer sent.");
		await until(
			async () => {
				const read = await callTool<{
					latest_run: { status: string };
					runs: { messages: { text: string }[] }[];
				}>(agent, "t3_thread", { thread_id: asked });
				return (
					read.data.latest_run.status === "completed" &&
					JSON.stringify(read.data.runs).includes("You chose blue")
				);
			},
			10_000,
			"the run to go on with Blue",
		);

		const long = await dispatch("long task", "Take your time");
		await untilRunStatus(agent, long, "running", "the long run to go");
		await page.goto(`${base}/console/threads/${long}`, { waitUntil: "load" });
		await submit(page, "form[action$='/interrupt'] button");
		expect(await mainText(page)).toContain("Interrupt sent.");
		await untilRunStatus(agent, long, "interrupted", "the run interrupted");
		await page.browserContext().close();
		const rows = auditRows(stack).filter(
			(r) => r.via === "console" && r.client === "agent",
		);
		expect(rows).toContainEqual(
			expect.objectContaining({
				tool: "t3_answer",
				thread_id: asked,
				result: "ok",
			}),
		);
		expect(rows).toContainEqual(
			expect.objectContaining({
				tool: "t3_interrupt",
				thread_id: long,
				result: "ok",
			}),
		);
	});

	test("without JavaScript: sign-in, the lists by reload, and a decision by the form", async () => {
		const page = await signedIn(TOKENS.boss, false);
		const threadId = await dispatch("run a command", "Decide without scripts");
		await untilPending(threadId, "approval", "the approval");
		await page.reload({ waitUntil: "load" });
		expect(
			await page.$$(`ul[data-section=attention] [data-thread="${threadId}"]`),
		).toHaveLength(1);
		await page.goto(`${base}/console/threads/${threadId}`, {
			waitUntil: "load",
		});
		await submit(page, "button[name=decision][value=decline]");
		expect(await mainText(page)).toContain("Sent: decline");
		await untilPending(threadId, null, "the approval answered");
		await page.browserContext().close();
	});

	test("sign-out ends the session", async () => {
		const page = await signedIn(TOKENS.watcher);
		const cookie = (await page.browserContext().cookies()).find(
			(c) => c.name === "t3mcp_console",
		);
		await submit(page, "form[action='/console/sign-out'] button");
		expect(new URL(page.url()).pathname).toBe("/console/sign-in");
		const again = await fetch(`${base}/console`, {
			headers: { cookie: `t3mcp_console=${cookie?.value}` },
			redirect: "manual",
		});
		expect(again.headers.get("location")).toBe("/console/sign-in");
		await page.browserContext().close();
	});

	test("a token change (reload) ends the session at once: the open page goes to sign-in", async () => {
		const page = await signedIn(TOKENS.watcher);
		await liveOpen(page);
		const next = structuredClone(stack.server.services.config) as AppConfig;
		for (const client of next.clients)
			if (client.name === "watcher")
				client.token = "watcher-token-rotated-0001";
		await stack.server.services.reload(next);
		await page.waitForFunction("location.pathname === '/console/sign-in'", {
			timeout: 10_000,
		});
		await page.browserContext().close();
	});

	test.skipIf(process.env.UPDATE_SCREENSHOTS !== "1")(
		"screenshots of the console for docs/people.md",
		async () => {
			mkdirSync(SHOTS, { recursive: true });
			// A realistic fleet: one approval and one question waiting, one run going, one failed.
			const approval = await dispatch("run a command", "Deploy the docs site");
			await dispatch("ask me", "Choose the release colour");
			await dispatch("long task", "Refactor the billing module");
			await dispatch("fail", "Upgrade the test runner");
			await untilPending(approval, "approval", "the approval");
			const page = await signedIn(TOKENS.ops);
			await page.setViewport({ width: 1280, height: 1000 });
			await page.reload({ waitUntil: "load" });
			await page.screenshot({ path: join(SHOTS, "console.png") });
			await page.setViewport({ width: 360, height: 740, deviceScaleFactor: 2 });
			await page.reload({ waitUntil: "load" });
			await page.screenshot({ path: join(SHOTS, "console-phone.png") });
			await page.goto(`${base}/console/threads/${approval}`, {
				waitUntil: "load",
			});
			await page.screenshot({ path: join(SHOTS, "console-thread.png") });
			await page.browserContext().close();
		},
	);
});

if (chromium === undefined) test.skip(noChromiumMessage(), () => {});
