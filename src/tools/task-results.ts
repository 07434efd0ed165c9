/**
 * How a task's wait becomes its result: exactly what the blocking tool call would have returned
 * (`t3_wait`'s result, or `t3_dispatch`'s with `wait`), so a task result and a blocking result
 * cannot drift apart.
 */

import { toolError } from "../mcp/result.ts";
import type { TaskShaper } from "../tasks/task-service.ts";
import { dispatchWaitResult, waitToolResult } from "./threads/wait-results.ts";

export const shapeTaskResult: TaskShaper = (tool, base, end) => {
	if ("error" in end) return toolError(end.error);
	if (tool === "t3_dispatch" && base)
		return dispatchWaitResult(base, end.report);
	return waitToolResult(end.report);
};
