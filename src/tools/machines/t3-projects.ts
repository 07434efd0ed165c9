/** `t3_projects`: the projects of one machine that the allowlist lets us use. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { defaultWorkspace } from "../../threads/dispatch/workspace.ts";
import { requireOnline, resolveMachine } from "../../threads/resolve.ts";
import { modelName } from "../../threads/shapes.ts";
import { machineArg, toolInput } from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3Projects = defineTool({
	name: "t3_projects",
	title: "List projects on a T3 machine",
	description:
		"List the projects on one T3 machine that you may start threads in: id, title, workspace path, default model, how many active threads each has and its default_workspace (root or worktree). Pass any of id, title or path as `project` to t3_dispatch. A machine that is not online is an error naming its state and why.",
	inputSchema: toolInput({
		machine: machineArg,
	}),
	outputSchema: z.object({
		machine: z.string(),
		projects: z.array(
			z.object({
				id: z.string(),
				title: z.string(),
				path: z.string(),
				default_model: z.string().nullable(),
				thread_count: z.number().int(),
				default_workspace: z
					.enum(["root", "worktree"])
					.describe(
						"Where a new thread works unless t3_dispatch says workspace: the root checkout or a new git worktree (T3's project setting).",
					),
			}),
		),
	}),
	annotations: {
		readOnlyHint: true,
		idempotentHint: true,
		openWorldHint: true,
	},
	async handler({ machine }, _ctx, services) {
		const entry = resolveMachine(services.threadDeps, machine);
		// An empty list from a machine that is down would read as "no projects there".
		await requireOnline(entry);
		const threads = entry.machine.threads();
		const projects = services.fleet.projects(entry).map((p) => ({
			id: p.id,
			title: p.title,
			path: p.workspaceRoot,
			default_model: modelName(p.defaultModelSelection),
			thread_count: threads.filter((t) => t.projectId === p.id).length,
			default_workspace: defaultWorkspace(p),
		}));
		return ok({ machine, projects });
	},
});
