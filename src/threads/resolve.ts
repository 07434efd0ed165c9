/** Turns tool arguments (machine name, project reference, model string) into fleet objects. */
import type { FleetMachine } from "../fleet/fleet.ts";
import type { ModelSelection, ProjectShell } from "../t3/model.ts";
import type { ThreadDeps } from "./deps.ts";
import { ThreadError } from "./errors.ts";

export function resolveMachine(deps: ThreadDeps, name: string): FleetMachine {
	const entry = deps.fleet.get(name);
	if (entry) return entry;
	const names = deps.fleet.names();
	throw new ThreadError(
		names.length
			? `Unknown machine "${name}". Configured machines: ${names.join(", ")}.`
			: `Unknown machine "${name}": no machines are configured (add [machines.<name>] to the config file).`,
	);
}

/** Fails with the machine's state and reason unless it is online (waiting briefly while connecting). */
/**
 * `machine` and `project`, when given beside an existing thread (`thread_id`, `fork_of`), must
 * be where that thread is: a mismatch names both and says to omit them.
 */
export function requireThreadPlace(
	args: { machine?: string; project?: string },
	place: { entry: FleetMachine; project: ProjectShell },
	threadId: string,
	argName: "thread_id" | "fork_of",
): void {
	const { entry, project } = place;
	if (args.machine !== undefined && args.machine !== entry.config.name)
		throw new ThreadError(
			`machine: thread "${threadId}" is on machine "${entry.config.name}", not "${args.machine}". Omit machine when passing ${argName}.`,
		);
	if (
		args.project !== undefined &&
		![project.id, project.title, project.workspaceRoot].includes(args.project)
	)
		throw new ThreadError(
			`project: thread "${threadId}" belongs to project "${project.title}" (id ${project.id}), not "${args.project}". Omit project when passing ${argName}.`,
		);
}

export async function requireOnline(entry: FleetMachine): Promise<void> {
	if (entry.machine.status().state === "connecting") {
		await entry.machine.ready(5_000).catch(() => {});
	}
	const status = entry.machine.status();
	if (status.state === "online") return;
	throw new ThreadError(
		`Machine "${entry.config.name}" is ${status.state}${status.reason ? `: ${status.reason}` : ""}. Check t3_machines for every machine's state.`,
	);
}

/** Matches a project id, title or workspace root among the machine's allowlisted projects. */
export function resolveProject(
	deps: ThreadDeps,
	entry: FleetMachine,
	ref: string,
): ProjectShell {
	const visible = deps.fleet.projects(entry);
	const matches = visible.filter(
		(p) => p.id === ref || p.title === ref || p.workspaceRoot === ref,
	);
	if (matches.length === 1) return matches[0] as ProjectShell;
	const list = (ps: ProjectShell[]) =>
		ps
			.map((p) => `"${p.title}" (id ${p.id}, path ${p.workspaceRoot})`)
			.join("; ");
	if (matches.length > 1) {
		throw new ThreadError(
			`Project "${ref}" is ambiguous on machine "${entry.config.name}": ${list(matches)}. Pass the project id instead.`,
		);
	}
	throw new ThreadError(
		visible.length
			? `Unknown project "${ref}" on machine "${entry.config.name}". Projects there: ${list(visible)}.`
			: `Machine "${entry.config.name}" has no projects this connector may use (check its projects patterns).`,
	);
}

/** Splits "<providerInstance>/<model>" on the first "/". */
function parseModel(
	value: string,
): { instanceId: string; model: string } | undefined {
	const slash = value.indexOf("/");
	if (slash <= 0 || slash === value.length - 1) return undefined;
	return { instanceId: value.slice(0, slash), model: value.slice(slash + 1) };
}

/**
 * The model for a new run: the `model` argument, else the machine's configured model, else the
 * project's default. The machine's options apply only on the machine's own provider instance.
 */
export function chooseModel(
	entry: FleetMachine,
	override: string | undefined,
	project: ProjectShell | undefined,
	current: ModelSelection | null | undefined,
): ModelSelection | undefined {
	let base: { instanceId: string; model: string } | undefined;
	if (override !== undefined) {
		base = parseModel(override);
		if (!base) {
			throw new ThreadError(
				`model: expected "<providerInstance>/<model>", e.g. "claudeAgent/claude-opus-5", got "${override}". t3_models lists the exact strings.`,
			);
		}
	} else {
		base =
			entry.config.model ??
			current ??
			project?.defaultModelSelection ??
			undefined;
	}
	if (!base) return undefined;
	const selection: ModelSelection = {
		instanceId: base.instanceId,
		model: base.model,
	};
	const options = entry.config.options;
	if (
		options.length &&
		entry.config.model?.instanceId === selection.instanceId
	) {
		selection.options = options;
	}
	return selection;
}
