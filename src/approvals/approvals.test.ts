/**
 * What a link shows as time and config move (CONTRACT.md "Approval links"): open until its
 * expiry, then expired; dead once `[approvals]` or its client changes; unknown for a token of
 * another shape or none. A manual clock; the state file in memory.
 */
import { describe, expect, test } from "bun:test";
import { testApprovals } from "../../test/helpers/approvals.ts";
import type {
	AppConfig,
	ApprovalsConfig,
	ClientConfig,
} from "../config/types.ts";
import type { Services } from "../services.ts";
import { openDb } from "../store/db.ts";
import { createManualClock } from "../util/clock.ts";
import { approvalsKey, createApprovals } from "./approvals.ts";
import { createLinkStore } from "./link-store.ts";
import { newLinkToken, tokenHash } from "./tokens.ts";

const APPROVALS = testApprovals("http://127.0.0.1:9/people");
const BOSS = { name: "boss", approve: true } as ClientConfig;

function fixture() {
	const clock = createManualClock(1_000_000);
	const db = openDb(":memory:");
	const config = {
		approvals: { ...APPROVALS },
		clients: [BOSS],
		server: { publicUrl: "https://t3mcp.example.ts.net" },
	} as unknown as AppConfig;
	const services = { config, db } as unknown as Services;
	const approvals = createApprovals(() => services, { clock });
	const token = newLinkToken();
	createLinkStore(db).insert({
		hash: tokenHash(token),
		thread: "t1",
		machine: "demo",
		request: "r1",
		config: approvalsKey(APPROVALS),
		view: {
			machine: "demo",
			project: { id: "p", title: "demo", path: null },
			title: "run ls",
			prompt: "list files",
			request_kind: "command",
			decisions: [
				{ decision: "accept", label: "Accept", warning: null },
				{ decision: "accept_always", label: "Always", warning: null },
				{ decision: "decline", label: "Decline", warning: null },
			],
			app_name: null,
		},
		now: clock.now(),
		expires: clock.now() + APPROVALS.linkTtlS * 1000,
	});
	return { clock, config, approvals, token };
}

describe("a link's state", () => {
	test("open until its expiry, offering only the configured decisions", () => {
		const { clock, approvals, token } = fixture();
		const open = approvals.state(token);
		expect(open.kind).toBe("open");
		expect(
			open.kind === "open" ? open.offered.map((d) => d.decision) : [],
		).toEqual(["accept", "decline"]);
		clock.advance(3600_000 - 1);
		expect(approvals.state(token).kind).toBe("open");
		clock.advance(1);
		expect(approvals.state(token).kind).toBe("expired");
	});

	test("an expired link decides nothing", async () => {
		const { clock, approvals, token } = fixture();
		clock.advance(3600_000);
		const outcome = await approvals.decide(token, "accept");
		expect(outcome.kind).toBe("taken");
		expect(outcome.kind === "taken" ? outcome.state.kind : "").toBe("expired");
	});

	test("dead when [approvals] changes, its client loses approve, or it goes", () => {
		const changed = fixture();
		(changed.config.approvals as ApprovalsConfig).linkTtlS = 60;
		expect(changed.approvals.state(changed.token).kind).toBe("dead");

		const demoted = fixture();
		demoted.config.clients = [{ ...BOSS, approve: false }];
		expect(demoted.approvals.state(demoted.token).kind).toBe("dead");

		const removed = fixture();
		removed.config.approvals = null;
		expect(removed.approvals.state(removed.token).kind).toBe("dead");
	});

	test("a token of another shape, or unknown, names no link", () => {
		const { approvals } = fixture();
		expect(approvals.state("link.css").kind).toBe("unknown");
		expect(approvals.state(newLinkToken()).kind).toBe("unknown");
	});
});
