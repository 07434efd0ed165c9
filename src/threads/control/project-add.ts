/**
 * `t3_project_add`: registers a project on a machine (`projects.mutate` `project.create`). A
 * project the allowlist hides does not exist for us, so adding one must not create, reveal or
 * nest into one: the path alone must match the machine's `projects` patterns, be absolute and
 * normalised, and stay clear of every existing project's root (inside, equal or above), hidden
 * ones included; the title must be unused there. `create` makes a missing directory: tried
 * without it first, so `created` says whether T3 had to.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import { T3Error } from "../../t3/machine-api.ts";
import type { ProjectShell } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { once } from "../dispatch/idempotency.ts";
import { ThreadError } from "../errors.ts";
import { requireOnline, resolveMachine } from "../resolve.ts";
import { isUnsupported, unsupportedError } from "../unsupported.ts";

export interface ProjectAddArgs {
	machine: string;
	path: string;
	title?: string;
	create?: boolean;
	idempotency_key?: string;
}

export type ProjectAddResult = {
	machine: string;
	project: { id: string; title: string; path: string };
	created: boolean;
};

/** Why `path` cannot be a new project's root, or null. */
export function pathProblem(path: string): string | null {
	if (!path.startsWith("/"))
		return "must be an absolute path (starting with /)";
	if (path === "/") return "cannot be the file system root";
	// A NUL ends the path early in C; a newline or escape would forge log lines and listings.
	if (/\p{Cc}/u.test(path))
		return "must not contain NUL or any other control character";
	if (path.endsWith("/")) return "must not end with /";
	for (const segment of path.slice(1).split("/")) {
		if (segment === "") return "must not contain an empty segment (//)";
		if (segment === "." || segment === "..")
			return "must be normalised (no . or .. segments)";
	}
	return null;
}

const within = (inner: string, outer: string) =>
	inner === outer || inner.startsWith(`${outer}/`);

function checkPlacement(
	entry: FleetMachine,
	path: string,
	title: string,
): void {
	const name = entry.config.name;
	for (const p of entry.machine.projects()) {
		const visible = entry.allows(p);
		const root = p.workspaceRoot;
		if (root === path)
			throw new ThreadError(
				visible
					? `path: ${path} is already project "${p.title}" (id ${p.id}) on machine "${name}". Dispatch into it with t3_dispatch project.`
					: `path: ${path} is not available on machine "${name}". Choose a path outside every existing project.`,
			);
		if (within(path, root) || within(root, path))
			throw new ThreadError(
				visible
					? `path: ${path} is ${within(path, root) ? "inside" : "above"} project "${p.title}" (${root}) on machine "${name}"; a project may not contain another. Choose a path outside every existing project.`
					: `path: ${path} overlaps a workspace on machine "${name}" that is not available to you; a project may not contain another. Choose a path outside every existing project.`,
			);
		if (p.title === title)
			throw new ThreadError(
				visible
					? `title: "${title}" is already the title of project ${p.id} (${root}) on machine "${name}". Pass another title.`
					: `title: "${title}" is already used on machine "${name}". Pass another title.`,
			);
	}
}

/** T3 refused because the directory is missing (ProjectMutationError text, matched loosely). */
function isMissingRoot(error: unknown): boolean {
	return (
		error instanceof T3Error &&
		error.code === "REJECTED" &&
		/does not exist|not exist|no such|not found|ENOENT/i.test(error.message)
	);
}

export async function addProject(
	deps: ThreadDeps,
	args: ProjectAddArgs,
): Promise<ProjectAddResult> {
	const entry = resolveMachine(deps, args.machine);
	const problem = pathProblem(args.path);
	if (problem)
		throw new ThreadError(
			`path: ${problem}; got ${JSON.stringify(args.path)}.`,
		);
	if (!entry.allowsPath(args.path))
		throw new ThreadError(
			`path: ${args.path} is not allowed on machine "${entry.config.name}": it matches none of the machine's \`projects\` patterns in the connector's config (a project is added only where a pattern matches its path).`,
		);
	const title = args.title ?? args.path.slice(args.path.lastIndexOf("/") + 1);
	const create = args.create ?? false;
	return once(
		deps,
		{
			tool: "t3_project_add",
			key: args.idempotency_key,
			args: { machine: entry.config.name, path: args.path, title, create },
		},
		async () => ({
			threadId: null,
			result: await createOn(deps, entry, args.path, title, create),
		}),
	);
}

async function createOn(
	deps: ThreadDeps,
	entry: FleetMachine,
	path: string,
	title: string,
	create: boolean,
): Promise<ProjectAddResult> {
	await requireOnline(entry);
	checkPlacement(entry, path, title);
	const name = entry.config.name;
	const { machine } = entry;
	const unsupported = () =>
		unsupportedError(
			name,
			"adding projects",
			"projects.mutate project.create",
			"add the project in T3 Code itself, then use t3_projects.",
		);
	if (!machine.createProject) throw unsupported();
	const attempt = (createWorkspaceRootIfMissing: boolean) =>
		(machine.createProject as NonNullable<typeof machine.createProject>)({
			commandId: deps.newId(),
			projectId: deps.newId(),
			title,
			workspaceRoot: path,
			createWorkspaceRootIfMissing,
		});
	let project: ProjectShell;
	let created = false;
	try {
		try {
			project = await attempt(false);
		} catch (error) {
			if (!isMissingRoot(error)) throw error;
			if (!create)
				throw new ThreadError(
					`path: ${path} does not exist on machine "${name}". Pass create: true to make the directory.`,
				);
			project = await attempt(true);
			created = true;
		}
	} catch (error) {
		if (isUnsupported(error)) throw unsupported();
		if (error instanceof T3Error && error.code === "REJECTED")
			throw new ThreadError(
				`T3 machine "${name}" refused to add the project: ${error.message}`,
			);
		throw error;
	}
	return {
		machine: name,
		project: {
			id: project.id,
			title: project.title,
			path: project.workspaceRoot,
		},
		created,
	};
}
