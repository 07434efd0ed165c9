/**
 * Approval links (CONTRACT.md "Approval links") end to end: an approval-required agent's
 * command on the simulator, the real server with an approver `link_client`, two webhook
 * receivers (the agents' hook and the people's), and a real headless Chromium on the link page.
 * Screenshots for docs/people.md are written only with UPDATE_SCREENSHOTS=1.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { Browser } from "puppeteer-core";
import type { AppConfig } from "../../src/config/types.ts";
import { healthReport } from "../../src/http/health.ts";
import { createMachine } from "../../src/t3/connect/machine.ts";
import { createLogger, silentLogger } from "../../src/util/log.ts";
import { testApprovals } from "../helpers/approvals.ts";
import { auditRows } from "../helpers/audit.ts";
import {
	chromiumPath,
	launchBrowser,
	mainText,
	noChromiumMessage,
	submit,
} from "../helpers/browser.ts";
import { eventShape } from "../helpers/event-shape.ts";
import {
	type Delivery,
	type Receiver,
	startReceiver,
	TEST_SECRET,
} from "../helpers/receiver.ts";
import {
	callTool,
	connectAs,
	machineConfig,
	type Stack,
	simRequests,
	startStack,
	testClient,
	until,
	untilMachineOnline,
	untilMachinesOnline,
} from "../helpers/stack.ts";

const SHOTS = join(import.meta.dir, "../../docs/images");
const PUBLIC = "https://t3mcp.example.ts.net";
const TOKENS = {
	agent: "agent-token-0123456789ab",
	boss: "boss-token-0123456789abc",
};
const XSS_TITLE = `Deploy <img src=x onerror="alert('pwned')"> & "quotes"`;
const chromium = chromiumPath();

let stack: Stack;
let agents: Receiver;
let people: Receiver;
let agent: Client;
let base: string;

beforeAll(async () => {
	agents = startReceiver();
	people = startReceiver();
	stack = await startStack({
		// "old": the pre-release engine, whose approvals get links too.
		machines: [
			{ name: "demo" },
			{ name: "old", sim: { compat: "prerelease" } },
		],
		clients: [
			testClient("agent", TOKENS.agent, {
				access: "approval-required",
				approve: false,
			}),
			testClient("boss", TOKENS.boss, { access: "read-only", approve: true }),
		],
		server: {
			hookUrl: agents.url,
			hookSecret: TEST_SECRET,
			publicUrl: PUBLIC,
			// Allowed for browser MCP clients: never for a link's POST.
			allowedOrigins: ["https://claude.ai"],
		},
		approvals: testApprovals(people.url),
	});
	stack.sim().record(true);
	base = new URL(stack.server.mcpUrl).origin;
	agent = await connectAs(stack, TOKENS.agent);
	await untilMachinesOnline(agent);
});

afterAll(async () => {
	await agent?.close();
	await stack?.stop();
	await agents?.stop();
	await people?.stop();
});

const ofThread = (receiver: Receiver, threadId: string, type?: string) =>
	receiver.deliveries.filter(
		(d) =>
			d.body.thread_id === threadId &&
			(type === undefined || d.body.type === type),
	);

/**
 * Until each receiver holds exactly one delivery of its type for the thread (checked together);
 * those deliveries, in the order asked.
 */
async function heard(
	threadId: string,
	...wanted: [receiver: Receiver, type: string][]
): Promise<Delivery[]> {
	const each = () =>
		wanted.map(([receiver, type]) => ofThread(receiver, threadId, type));
	await until(
		() => each().every((found) => found.length === 1),
		10_000,
		wanted.map(([, type]) => type).join(" and "),
	);
	return each().map((found) => found[0] as Delivery);
}

/** The approval_url as this test reaches it: the server's own address instead of public_url. */
const local = (url: string) => url.replace(PUBLIC, base);

/** Dispatches the sim's "run a command" as the agent and waits for its link on the people hook. */
async function requestLink(title = "run ls", machine = "demo") {
	const dispatched = await callTool<{ thread_id: string }>(
		agent,
		"t3_dispatch",
		{ machine, project: "demo", prompt: "run a command", title },
	);
	expect(dispatched.isError, dispatched.text).toBe(false);
	const threadId = dispatched.data.thread_id;
	const [requested] = await heard(threadId, [people, "approval.requested"]);
	const delivery = requested as Delivery;
	const url = String(delivery.body.approval_url);
	return { threadId, delivery, url, localUrl: local(url) };
}

const responds = (threadId: string) =>
	simRequests(
		stack.sim(),
		"orchestration.dispatchCommand",
		"runtime-request.respond",
	).filter((p) => p.threadId === threadId);

const post = (url: string, decision: string, origin: string | null = base) =>
	fetch(url, {
		method: "POST",
		headers: {
			"content-type": "application/x-www-form-urlencoded",
			...(origin === null ? {} : { origin }),
		},
		body: `decision=${encodeURIComponent(decision)}`,
	});

describe("a link on the people hook only", () => {
	let link: Awaited<ReturnType<typeof requestLink>>;
	beforeAll(async () => {
		link = await requestLink();
	});

	test("approval.requested: signed, under public_url, with the approval's decisions", async () => {
		const { delivery, url, threadId } = link;
		expect(delivery.verified).toBe(true);
		expect(url).toMatch(
			/^https:\/\/t3mcp\.example\.ts\.net\/a\/[A-Za-z0-9_-]{43}$/,
		);
		expect(delivery.body).toMatchObject({
			type: "approval.requested",
			machine: "demo",
			thread_id: threadId,
			project: { title: "demo" },
			title: "run ls",
			client: "agent",
			question: {
				decisions: [
					{ decision: "accept", label: "Accept", warning: null },
					{ decision: "decline", label: "Decline", warning: null },
				],
			},
		});
		expect(Date.parse(String(delivery.body.expires_at))).toBeGreaterThan(
			Date.now(),
		);
		// Never routed into a conversation: no origin header on the people hook.
		expect(delivery.headers["x-conversation-origin"]).toBeUndefined();
	});

	test("/healthz's operator view counts the people outbox apart", async () => {
		const peopleOutbox = () =>
			(
				healthReport(stack.server.services) as {
					people_outbox?: Record<string, number>;
				}
			).people_outbox;
		// The row is marked delivered just after the receiver answered.
		await until(() => peopleOutbox()?.pending === 0, 5_000, "delivered");
		expect(peopleOutbox()).toEqual({
			pending: 0,
			oldest_pending_s: 0,
			dead: 0,
		});
	});

	test("the agents' hook gets the question, and no event there carries a link", async () => {
		await heard(link.threadId, [agents, "thread.question"]);
		for (const d of agents.deliveries) {
			expect(d.raw).not.toContain("/a/");
			expect(d.raw).not.toContain("approval_url");
			expect(d.body.type).not.toStartWith("approval.");
		}
		const token = link.url.split("/a/")[1] as string;
		const shown = await callTool(agent, "t3_thread", {
			thread_id: link.threadId,
		});
		expect(shown.text).not.toContain(token);
	});

	test("two GETs decide nothing; the page is a script-free, framing-proof form", async () => {
		for (let i = 0; i < 2; i++) {
			const res = await fetch(link.localUrl);
			expect(res.status).toBe(200);
			expect(res.headers.get("content-security-policy")).toBe(
				"default-src 'self'; frame-ancestors 'none'",
			);
			expect(res.headers.get("x-content-type-options")).toBe("nosniff");
			const html = await res.text();
			expect(html).toContain(
				'<button type="submit" name="decision" value="accept"',
			);
			expect(html).not.toContain("<script");
			expect(html).not.toContain("style=");
		}
		expect(responds(link.threadId)).toHaveLength(0);
		expect(ofThread(people, link.threadId, "approval.settled")).toHaveLength(0);
	});

	test("a POST from a foreign Origin is 403 and sends nothing", async () => {
		const res = await post(link.localUrl, "accept", "http://evil.example");
		expect(res.status).toBe(403);
		const mcpOrigin = await post(link.localUrl, "accept", "https://claude.ai");
		expect(mcpOrigin.status).toBe(403);
		expect(responds(link.threadId)).toHaveLength(0);
	});

	test("an unknown token is a 404 page", async () => {
		const res = await fetch(`${base}/a/${"A".repeat(43)}`);
		expect(res.status).toBe(404);
		expect(await res.text()).toContain("This link is not valid");
	});
});

describe.skipIf(chromium === undefined)("in a real browser", () => {
	let browser: Browser;
	let link: Awaited<ReturnType<typeof requestLink>>;
	beforeAll(async () => {
		browser = await launchBrowser(chromium as string);
		link = await requestLink(XSS_TITLE);
	});
	afterAll(async () => {
		await browser?.close();
	});

	test("the title renders as text (no dialog), the page fits 360 px, Accept completes the run", async () => {
		const page = await browser.newPage();
		const dialogs: string[] = [];
		page.on("dialog", async (dialog) => {
			dialogs.push(dialog.message());
			await dialog.dismiss();
		});
		await page.setViewport({ width: 360, height: 780, deviceScaleFactor: 2 });
		await page.goto(link.localUrl, { waitUntil: "load" });
		expect(await page.$$eval("img", (imgs) => imgs.length)).toBe(0);
		const text = await mainText(page);
		expect(text).toContain(XSS_TITLE);
		// Evaluated in the page (a string: this file is not compiled against the DOM's types).
		const widths = (await page.evaluate(
			"({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })",
		)) as { scroll: number; client: number };
		expect(widths.scroll).toBeLessThanOrEqual(widths.client);
		// The stylesheet came from the server (CSP allows no inline style).
		const background = await page.evaluate(
			"getComputedStyle(document.querySelector('button[name=decision][value=accept]')).backgroundColor",
		);
		expect(background).toBe("rgb(26, 127, 55)");
		await submit(page, "button[name=decision][value=accept]");
		expect(await mainText(page)).toContain("Decided: Accept, by client boss");
		expect(dialogs).toEqual([]);
		await page.close();

		await heard(link.threadId, [agents, "thread.completed"]);
		expect(responds(link.threadId)).toHaveLength(1);
	});

	test("approval.settled follows on the people hook, thread.answered on the agents' hook", async () => {
		const [settled] = await heard(link.threadId, [people, "approval.settled"]);
		expect(settled?.verified).toBe(true);
		expect(settled?.body).toMatchObject({
			type: "approval.settled",
			thread_id: link.threadId,
			request_id: (link.delivery.body.question as { request_id: string })
				.request_id,
			decision: "accept",
			client: "boss",
			via: "link",
		});
		const [answered] = await heard(link.threadId, [agents, "thread.answered"]);
		expect(answered?.body).toMatchObject({
			type: "thread.answered",
			machine: "demo",
			kind: "approval",
			decision: "accept",
			client: "boss",
			via: "link",
		});
		expect(answered?.raw).not.toContain("/a/");
		// The bodies' names, as CONTRACT.md "Approval links" lists them.
		const keep = ["type", "kind", "via", "decision"];
		expect({
			requested: eventShape(link.delivery.body, keep),
			settled: eventShape(settled?.body, keep),
			answered: eventShape(answered?.body, keep),
		}).toMatchSnapshot();
	});

	test("the reopened link offers no decision", async () => {
		const page = await browser.newPage();
		await page.goto(link.localUrl, { waitUntil: "load" });
		expect(await page.$$("button[name=decision]")).toHaveLength(0);
		expect(await mainText(page)).toContain("Decided: Accept");
		await page.close();
	});

	// docs/people.md's pictures: written only when asked, so test runs never change the tree.
	test.skipIf(process.env.UPDATE_SCREENSHOTS !== "1")(
		"screenshots of the page for docs/people.md",
		async () => {
			const shown = await requestLink("Fix the flaky login test");
			const page = await browser.newPage();
			await page.setViewport({ width: 360, height: 720, deviceScaleFactor: 2 });
			await page.goto(shown.localUrl, { waitUntil: "load" });
			mkdirSync(SHOTS, { recursive: true });
			await page.screenshot({ path: join(SHOTS, "approval-link.png") });
			await submit(page, "button[name=decision][value=accept]");
			await page.screenshot({
				path: join(SHOTS, "approval-link-decided.png"),
			});
			await page.close();
		},
	);

	test("the audit has the decision as the link client, via link", () => {
		const rows = auditRows(stack).filter((r) => r.thread_id === link.threadId);
		expect(rows).toContainEqual(
			expect.objectContaining({
				client: "boss",
				tool: "t3_answer",
				via: "link",
				detail: "accept",
				result: "ok",
			}),
		);
	});
});

if (chromium === undefined) test.skip(noChromiumMessage(), () => {});

describe("a run that ends while waiting", () => {
	test("settles the link with no decision; the agents' hook gets the outcome, not thread.answered", async () => {
		const link = await requestLink();
		await heard(link.threadId, [agents, "thread.question"]);
		const stopped = await callTool(agent, "t3_interrupt", {
			thread_id: link.threadId,
		});
		expect(stopped.isError, stopped.text).toBe(false);
		const [settled] = await heard(
			link.threadId,
			[people, "approval.settled"],
			[agents, "thread.interrupted"],
		);
		expect(settled?.body).toMatchObject({
			decision: null,
			client: null,
			via: null,
		});
		expect(ofThread(agents, link.threadId, "thread.answered")).toEqual([]);
		const page = await (await fetch(link.localUrl)).text();
		expect(page).toContain("no longer pending");
		expect(page).not.toContain('name="decision"');
	});
});

describe("answered in T3 itself", () => {
	test("the link and thread.answered carry T3's recorded decision, without who", async () => {
		const link = await requestLink();
		await heard(link.threadId, [agents, "thread.question"]);
		// Another T3 client (T3's own UI) answers over the protocol, not through the connector.
		const sim = stack.sim();
		const t3 = createMachine(
			machineConfig({ name: "t3-ui", projects: ["*"] }, sim.url, sim.token),
			{ log: silentLogger },
		);
		t3.start();
		try {
			await t3.ready(10_000);
			await t3.dispatch({
				type: "runtime-request.respond",
				commandId: crypto.randomUUID(),
				threadId: link.threadId,
				requestId: (link.delivery.body.question as { request_id: string })
					.request_id,
				decision: "decline",
			});
		} finally {
			await t3.stop();
		}
		const [settled, answered] = await heard(
			link.threadId,
			[people, "approval.settled"],
			[agents, "thread.answered"],
		);
		expect(settled?.body).toMatchObject({
			decision: "decline",
			client: null,
			via: null,
		});
		expect(await (await fetch(link.localUrl)).text()).toContain(
			"Already answered elsewhere: Decline.",
		);
		expect(answered?.body).toMatchObject({
			kind: "approval",
			decision: "decline",
			client: null,
			via: null,
		});
		expect((await post(link.localUrl, "accept")).status).toBe(409);
	});
});

describe("unwatched threads", () => {
	test("an approval on a thread nobody watches still gets its link; the agents' hook hears nothing", async () => {
		const dispatched = await callTool<{ thread_id: string }>(
			agent,
			"t3_dispatch",
			{
				machine: "demo",
				project: "demo",
				prompt: "run a command",
				watch: false,
			},
		);
		expect(dispatched.isError, dispatched.text).toBe(false);
		const threadId = dispatched.data.thread_id;
		const [requested] = await heard(threadId, [people, "approval.requested"]);
		const url = local(String(requested?.body.approval_url));
		expect((await post(url, "decline")).status).toBe(200);
		await heard(threadId, [people, "approval.settled"]);
		expect(ofThread(agents, threadId)).toEqual([]);
	});
});

describe("deciding once", () => {
	test("the pre-release engine's approval gets a link that decides it", async () => {
		const link = await requestLink("run ls", "old");
		expect(link.delivery.body.machine).toBe("old");
		expect((await post(link.localUrl, "accept")).status).toBe(200);
		await heard(link.threadId, [agents, "thread.completed"]);
	});

	test("two POSTs at once decide once; the second sees who decided", async () => {
		const link = await requestLink();
		const [a, b] = await Promise.all([
			post(link.localUrl, "decline"),
			post(link.localUrl, "decline"),
		]);
		const statuses = [a.status, b.status].sort();
		expect(statuses).toEqual([200, 409]);
		const second = a.status === 409 ? await a.text() : await b.text();
		expect(second).not.toContain('name="decision"');
		await heard(link.threadId, [agents, "thread.completed"]); // the declined run ended
		expect(responds(link.threadId)).toHaveLength(1);
		// Without a browser too: the settled and answered events, and the audit row.
		for (const event of await heard(
			link.threadId,
			[people, "approval.settled"],
			[agents, "thread.answered"],
		))
			expect(event?.body).toMatchObject({
				decision: "decline",
				client: "boss",
				via: "link",
			});
		expect(
			auditRows(stack).filter(
				(r) => r.thread_id === link.threadId && r.tool === "t3_answer",
			),
		).toEqual([
			expect.objectContaining({
				client: "boss",
				via: "link",
				detail: "decline",
				result: "ok",
			}),
		]);
		// public_url's origin passes the check; the link is used.
		const again = await post(link.localUrl, "accept", PUBLIC);
		expect(again.status).toBe(409);
		expect(await again.text()).toContain("Decided: Decline, by client boss");
		expect(responds(link.threadId)).toHaveLength(1);
	});

	test("answered elsewhere: the link says so and decides nothing", async () => {
		const link = await requestLink();
		const boss = await connectAs(stack, TOKENS.boss);
		const answered = await callTool(boss, "t3_answer", {
			thread_id: link.threadId,
			decision: "accept",
		});
		expect(answered.isError, answered.text).toBe(false);
		await boss.close();
		const [settled] = await heard(link.threadId, [people, "approval.settled"]);
		expect(settled?.body).toMatchObject({
			decision: "accept",
			client: "boss",
			via: "mcp",
		});
		const page = await fetch(link.localUrl);
		const html = await page.text();
		expect(html).toContain("Already answered elsewhere");
		expect(html).not.toContain('name="decision"');
		const res = await post(link.localUrl, "decline");
		expect(res.status).toBe(409);
		expect(responds(link.threadId)).toHaveLength(1);
	});

	test("a machine that cannot be reached keeps the link usable", async () => {
		const link = await requestLink();
		const sim = stack.sim();
		sim.revokeToken(sim.token);
		sim.dropSockets();
		await until(
			() =>
				stack.server.services.fleet.get("demo")?.machine.status().state !==
				"online",
			10_000,
			"demo not online",
		);
		const failed = await post(link.localUrl, "accept");
		expect(failed.status).toBe(503);
		const html = await failed.text();
		expect(html).toContain("This link still works");
		expect(html).toContain('name="decision" value="accept"');
		sim.restoreToken(sim.token);
		await untilMachineOnline(agent, "demo");
		const res = await post(link.localUrl, "accept");
		expect(res.status).toBe(200);
		expect(await res.text()).toContain("Decided: Accept");
		await until(
			() => ofThread(agents, link.threadId, "thread.completed").length === 1,
			15_000,
			"the run to complete",
		);
		const rows = auditRows(stack).filter(
			(r) => r.thread_id === link.threadId && r.tool === "t3_answer",
		);
		expect(rows.map((r) => [r.result, r.client, r.via]).sort()).toEqual([
			["machine_offline", "boss", "link"],
			["ok", "boss", "link"],
		]);
	});
});

describe("a reload", () => {
	test("adding [approvals] makes links from then on; changing it kills the links made before", async () => {
		const hook = startReceiver();
		const own = await startStack({
			clients: [
				testClient("agent", TOKENS.agent, {
					access: "approval-required",
					approve: false,
				}),
				testClient("boss", TOKENS.boss, { access: "read-only", approve: true }),
			],
			server: { hookSecret: TEST_SECRET },
		});
		const as = await connectAs(own, TOKENS.agent);
		try {
			await untilMachinesOnline(as);
			const reload = (change: (c: AppConfig) => void) => {
				const next = structuredClone(own.server.services.config);
				change(next);
				return own.server.services.reload(next);
			};
			const report = await reload((c) => {
				c.server.publicUrl = PUBLIC;
				c.approvals = testApprovals(hook.url);
			});
			expect(report.server.applied).toContain("publicUrl");
			const dispatched = await callTool<{ thread_id: string }>(
				as,
				"t3_dispatch",
				{ machine: "demo", project: "demo", prompt: "run a command" },
			);
			await until(
				() => ofThread(hook, dispatched.data.thread_id).length === 1,
				10_000,
				"a link after the reload",
			);
			const url = String(
				ofThread(hook, dispatched.data.thread_id)[0]?.body.approval_url,
			).replace(PUBLIC, new URL(own.server.mcpUrl).origin);
			expect(await (await fetch(url)).text()).toContain('name="decision"');

			await reload((c) => {
				if (c.approvals) c.approvals.linkTtlS = 600;
			});
			const dead = await fetch(url);
			const html = await dead.text();
			expect(html).toContain("This link no longer works");
			expect(html).not.toContain('name="decision"');
			const refused = await fetch(url, {
				method: "POST",
				headers: { "content-type": "application/x-www-form-urlencoded" },
				body: "decision=accept",
			});
			expect(refused.status).toBe(409);
		} finally {
			await as.close();
			await own.stop();
			await hook.stop();
		}
	});
});

describe("logs", () => {
	test("a failing link request is logged with the token masked", async () => {
		const lines: string[] = [];
		const own = await startStack({
			log: createLogger("debug", (line) => lines.push(line)),
		});
		try {
			own.server.services.approvals.state = () => {
				throw new Error("boom");
			};
			const token = "T".repeat(43);
			const res = await fetch(
				`${new URL(own.server.mcpUrl).origin}/a/${token}`,
			);
			expect(res.status).toBe(500);
			const logged = lines.filter((l) => l.includes("http handler failed"));
			expect(logged).toHaveLength(1);
			expect(logged[0]).toContain('"path":"/a/[redacted]"');
			expect(lines.join("\n")).not.toContain(token);
		} finally {
			await own.stop();
		}
	});
});
