import { expect, test } from "bun:test";
import type { Run, ThreadProjection } from "../../t3/model.ts";
import { queuedRuns } from "./interrupt.ts";

const run = (id: string, ordinal: number, queuePosition?: number | null) =>
	({ id, ordinal, status: "queued", queuePosition }) as unknown as Run;
const projection = (runs: Run[]) => ({ runs }) as unknown as ThreadProjection;

test("queued follow-ups in T3's delivery order (queuePosition), not by ordinal", () => {
	// Reordered in T3's app: the newest follow-up goes first.
	const ids = queuedRuns(
		projection([run("r2", 2, 3), run("r3", 3, 1), run("r4", 4, 2)]),
	).map((r) => r.run_id);
	expect(ids).toEqual(["r3", "r4", "r2"]);
});

test("without queuePosition (the pre-release engine) by ordinal", () => {
	const ids = queuedRuns(projection([run("r3", 3), run("r2", 2)])).map(
		(r) => r.run_id,
	);
	expect(ids).toEqual(["r2", "r3"]);
});
