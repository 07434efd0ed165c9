/** `t3_project_add`: add a project (a workspace directory) on one T3 machine. */
import { z } from "zod";
import { ok } from "../../mcp/result.ts";
import { addProject } from "../../threads/control/project-add.ts";
import {
	idempotencyKeyArg,
	machineArg,
	PATH_MAX,
	projectRefSchema,
	titleArg,
	toolInput,
} from "../schemas.ts";
import { defineTool } from "../tool.ts";

export const t3ProjectAdd = defineTool({
	name: "t3_project_add",
	title: "Add a project on a T3 machine",
	description:
		"Add a project on one T3 machine: a workspace directory threads then run in (t3_dispatch project). The path must be absolute, allowed by the machine's project patterns in the connector's config, and outside every existing project (not inside or above one); the title (default: the directory's name) must be unused there. create: true makes a missing directory (the result's created says whether it did). Use it before dispatching into a repository the machine does not list in t3_projects yet.",
	inputSchema: toolInput({
		machine: machineArg,
		path: z
			.string()
			.min(1)
			.max(PATH_MAX)
			.describe(
				"Absolute, normalised workspace path on that machine, e.g. /home/me/src/app.",
			),
		title: titleArg(200)
			.min(1)
			.optional()
			.describe("Project title; default the directory's name."),
		create: z
			.boolean()
			.optional()
			.describe(
				"Make the directory when it does not exist (default false: a missing directory is an error).",
			),
		idempotency_key: idempotencyKeyArg,
	}),
	outputSchema: z.object({
		machine: z.string(),
		project: projectRefSchema,
		created: z.boolean(),
	}),
	annotations: {
		readOnlyHint: false,
		destructiveHint: false,
		idempotentHint: false,
		openWorldHint: true,
	},
	async handler(args, _ctx, { threadDeps }) {
		return ok(await addProject(threadDeps, args));
	},
});
