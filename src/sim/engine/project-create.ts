/**
 * `projects.mutate` `project.create` (PROTOCOL.md §6.11, operate scope): registers a project on
 * a workspace root. The simulator never touches the disk: the directories that "exist" are the
 * projects' roots and their parents, plus those it created for `createWorkspaceRootIfMissing`.
 * Replays of a commandId return the first answer. Other mutations are not simulated.
 */
import type { Outcome } from "./engine.ts";
import type { Store } from "./store.ts";

export interface ProjectMutations {
	mutate(payload: Record<string, unknown>): Outcome;
}

const REQUIRED = ["commandId", "projectId", "title", "workspaceRoot"];

function parents(path: string): string[] {
	const out: string[] = [];
	for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1))
		out.push(path.slice(0, i));
	return out;
}

export function createProjectMutations(store: Store): ProjectMutations {
	const receipts = new Map<string, Outcome>();
	const created = new Set<string>();

	function exists(dir: string): boolean {
		if (created.has(dir)) return true;
		for (const p of store.projects.values()) {
			const root = String(p.row.workspaceRoot);
			if (root === dir || parents(root).includes(dir)) return true;
		}
		return false;
	}

	function fail(commandId: string, message: string): Outcome {
		return { fail: { _tag: "ProjectMutationError", commandId, message } };
	}

	function create(c: Record<string, unknown>): Outcome {
		const commandId = String(c.commandId);
		const projectId = String(c.projectId);
		const root = String(c.workspaceRoot);
		if (store.projects.has(projectId))
			return fail(commandId, `Project ${projectId} already exists.`);
		for (const p of store.projects.values())
			if (p.row.workspaceRoot === root)
				return fail(
					commandId,
					`A project already uses workspace root ${root}.`,
				);
		if (!exists(root)) {
			if (c.createWorkspaceRootIfMissing !== true)
				return fail(commandId, `Workspace root ${root} does not exist.`);
			created.add(root);
		}
		const project = store.addProject({
			id: projectId,
			title: String(c.title),
			workspaceRoot: root,
		});
		return { ok: { ...project.row } };
	}

	return {
		mutate(c) {
			if (c.type !== "project.create")
				return {
					die: `Expected { readonly "type": "project.create", ... }, got ${JSON.stringify(c.type)}\n  at ["type"]`,
				};
			const key = REQUIRED.find((k) => c[k] === undefined);
			if (key) return { die: `Missing key\n  at ["${key}"]` };
			const commandId = String(c.commandId);
			const receipt = receipts.get(commandId);
			if (receipt) return receipt;
			const outcome = create(c);
			receipts.set(commandId, outcome);
			return outcome;
		},
	};
}
