/** Every MCP tool this server offers, in the order clients list them. */
import { t3Watch } from "./events/t3-watch.ts";
import { t3Machines } from "./machines/t3-machines.ts";
import { t3Models } from "./machines/t3-models.ts";
import { t3ProjectAdd } from "./machines/t3-project-add.ts";
import { t3Projects } from "./machines/t3-projects.ts";
import { t3Usage } from "./machines/t3-usage.ts";
import { t3Answer } from "./threads/t3-answer.ts";
import { t3Delete } from "./threads/t3-delete.ts";
import { t3Diff } from "./threads/t3-diff.ts";
import { t3Dispatch } from "./threads/t3-dispatch.ts";
import { t3Interrupt } from "./threads/t3-interrupt.ts";
import { t3Manage } from "./threads/t3-manage.ts";
import { t3Thread } from "./threads/t3-thread.ts";
import { t3Threads } from "./threads/t3-threads.ts";
import { t3Wait } from "./threads/t3-wait.ts";
import type { ToolDefinition } from "./tool.ts";

export const tools: ToolDefinition[] = [
	t3Machines,
	t3Projects,
	t3ProjectAdd,
	t3Models,
	t3Dispatch,
	t3Wait,
	t3Thread,
	t3Answer,
	t3Interrupt,
	t3Watch,
	t3Threads,
	t3Manage,
	t3Delete,
	t3Diff,
	t3Usage,
];
