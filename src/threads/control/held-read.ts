/**
 * A fresh read of a thread for a path that puts the caller's words or choices into its next
 * run: the projection as T3 has it now, after the path is checked against the thread's runtime
 * mode (CONTRACT.md "Trust round three"), so a refused call sends nothing.
 */
import { checkThreadPath, type ThreadPath } from "../../rights/run-limits.ts";
import type { ThreadProjection } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { type LocatedThread, readDetail, runtimeModeOf } from "../locate.ts";

export async function readHeldToMode(
	deps: ThreadDeps,
	located: LocatedThread,
	path: ThreadPath,
): Promise<ThreadProjection> {
	const { projection } = await readDetail(located, true);
	checkThreadPath(
		deps.client,
		path,
		located.threadId,
		runtimeModeOf(located, projection),
	);
	return projection;
}
