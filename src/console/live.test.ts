import { describe, expect, it } from "bun:test";
import {
	FAKE_PROJECT,
	fakeFleetOf,
	onlineStatus,
} from "../../test/helpers/fake-machine.ts";
import { OPEN_CALLER } from "../config/clients.ts";
import type { AppConfig } from "../config/types.ts";
import type { Services } from "../services.ts";
import type { MachineStatus } from "../t3/machine-api.ts";
import type { ThreadShell } from "../t3/model.ts";
import { createLive } from "./live.tsx";
import type { Session } from "./sessions.ts";

const shell = (title: string, status = "running"): ThreadShell =>
	({
		id: "t1",
		projectId: FAKE_PROJECT.id,
		title,
		latestRunId: "r1",
		activeRunId: status === "running" ? "r1" : null,
		status,
		pendingRuntimeRequest: null,
		latestVisibleMessage: null,
		updatedAt: "2026-12-01T00:00:00.000Z",
	}) as ThreadShell;

function setUp(maxQueued: number) {
	let current = shell("first");
	let status: MachineStatus = onlineStatus("x");
	const { fleet, entry, emit } = fakeFleetOf({
		status: () => status,
		projects: () => [FAKE_PROJECT],
		threads: () => [current],
		thread: (id: string) => (id === current.id ? current : undefined),
	});
	const services = {
		config: {
			clients: [],
			server: { token: undefined },
		} as unknown as AppConfig,
		fleet,
		threadDeps: { now: () => Date.now(), threads: { get: () => undefined } },
	} as unknown as Services;
	const live = createLive(services, { maxQueued, stillValid: () => true });
	live.start();
	const session: Session = {
		id: "x".repeat(43),
		idHash: "h",
		client: OPEN_CALLER,
		csrf: "c",
		expiresAt: Number.MAX_SAFE_INTEGER,
	};
	const change = (next: ThreadShell) => {
		const previous = current;
		current = next;
		emit({ kind: "thread", thread: next, sequence: 1, previous });
	};
	const setStatus = (next: MachineStatus) => {
		status = next;
		emit({ kind: "state", status: next });
	};
	return { live, session, change, entry, setStatus };
}

type Reader = { read(): Promise<{ value?: Uint8Array }> };
const read = async (reader: Reader) =>
	new TextDecoder().decode((await reader.read()).value);
const readerOf = (response: Response): Reader =>
	(
		response.body as ReadableStream<Uint8Array>
	).getReader() as unknown as Reader;

describe("the console's live stream", () => {
	it("sends a changed row, rendered with every text escaped", async () => {
		const { live, session, change } = setUp(16);
		const reader = readerOf(live.open(session));
		expect(await read(reader)).toBe("retry: 2000\n\n");
		change(shell("<img src=x onerror=alert(1)>", "completed"));
		const message = await read(reader);
		expect(message.startsWith("event: row\ndata: ")).toBe(true);
		const data = JSON.parse(message.slice(message.indexOf("data: ") + 6));
		expect(data.id).toBe("t1");
		expect(data.section).toBe("settled");
		expect(data.html).toContain("&lt;img src=x onerror=alert(1)&gt;");
		expect(data.html).not.toContain("<img");
		live.stop();
	});

	it("sends a machine's row when its state changes, token expiry warned within 7 days", async () => {
		const { live, session, setStatus } = setUp(16);
		const reader = readerOf(live.open(session));
		await read(reader);
		setStatus({
			state: "offline",
			reason: 'machine "m": connection refused',
			serverVersion: null,
			lastEventAt: null,
			tokenExpiresAt: new Date(Date.now() + 3 * 86_400_000).toISOString(),
		});
		const message = await read(reader);
		expect(message.startsWith("event: machine\n")).toBe(true);
		const data = JSON.parse(message.slice(message.indexOf("data: ") + 6));
		expect(data.name).toBe("m");
		expect(data.html).toContain("offline");
		expect(data.html).toContain("connection refused");
		expect(data.html).toContain("⚠ token expires");
		live.stop();
	});

	it("a stream opened after a change its page missed starts with a redraw", async () => {
		const { live, session, change } = setUp(16);
		const before = Date.now() - 1;
		change(shell("changed before the stream"));
		const late = readerOf(live.open(session, undefined, before));
		expect(await read(late)).toBe("retry: 2000\n\n");
		expect(await read(late)).toBe("event: redraw\ndata: {}\n\n");
		const fresh = readerOf(live.open(session, undefined, Date.now() + 1));
		expect(await read(fresh)).toBe("retry: 2000\n\n");
		change(shell("changed after"));
		expect((await read(fresh)).startsWith("event: row\n")).toBe(true);
		live.stop();
	});

	it("drops a stream that falls behind its buffer, and nobody else waits", async () => {
		const { live, session, change } = setUp(4);
		const lagging = live.open(session);
		const reading = readerOf(live.open(session));
		expect(live.count()).toBe(2);
		const got: string[] = [];
		for (let i = 0; i < 10; i++) {
			change(shell(`title ${i}`));
			got.push(await read(reading));
		}
		expect(live.dropped()).toBe(1);
		expect(live.count()).toBe(1);
		expect(got.filter((m) => m.startsWith("event: row"))).toHaveLength(9);
		expect(lagging.body).not.toBeNull();
		live.closeWhere(() => true);
		expect(live.count()).toBe(0);
		live.stop();
	});
});
