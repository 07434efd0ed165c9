/**
 * The machine's copy of T3's shell (PROTOCOL.md §7, §8.2): projects and active threads, kept
 * current from snapshots and sequence-numbered deltas, each applied change told to `emit`.
 */
import { compactThreadShell } from "../decode/shell.ts";
import type { ShellChange } from "../machine-api.ts";
import type {
	ProjectShell,
	ShellSnapshot,
	ShellStreamItem,
	ThreadShell,
} from "../model.ts";

export interface ShellMirror {
	projects(): ProjectShell[];
	threads(): ThreadShell[];
	thread(id: string): ThreadShell | undefined;
	/** The sequence of the last item applied: where a resubscribe resumes. */
	sequence(): number;
	/** A snapshot was applied at least once. */
	hasState(): boolean;
	/** A project T3 just answered with (projects.mutate): known before its delta arrives. */
	noteProject(project: ProjectShell): void;
	/** An authoritative shell: replaces every project and active thread. */
	applySnapshot(snap: ShellSnapshot): void;
	/** A snapshot or delta from the stream (not `synchronized` / `unknown`, which the machine handles). */
	apply(
		item: Exclude<ShellStreamItem, { kind: "synchronized" | "unknown" }>,
	): void;
}

/**
 * Project lists replaced so far, on every machine: what a kept listing plan (t3_threads)
 * compares, since a project change is no shell change event.
 */
let projectListChanges = 0;
export const projectListVersion = (): number => projectListChanges;

export function createShellMirror(
	emit: (change: ShellChange) => void,
): ShellMirror {
	const projects = new Map<string, ProjectShell>();
	const threads = new Map<string, ThreadShell>();
	let lastSeq = 0;
	let haveState = false;
	/**
	 * `projects()` as one array until a project changes: every listing asks each machine for
	 * its projects, and one array per ask of 500 machines was a listing's largest cost.
	 */
	let projectList: ProjectShell[] | undefined;
	const forgetProjectList = () => {
		projectList = undefined;
		projectListChanges += 1;
	};
	const setProject = (project: ProjectShell) => {
		projects.set(project.id, project);
		forgetProjectList();
	};

	function upsertThread(thread: ThreadShell, sequence: number): void {
		const previous = threads.get(thread.id);
		threads.set(thread.id, thread);
		emit({ kind: "thread", thread, sequence, previous });
	}

	function removeThread(threadId: string, sequence: number): void {
		const previous = threads.get(threadId);
		if (!previous) return;
		threads.delete(threadId);
		emit({ kind: "thread.removed", threadId, sequence, previous });
	}

	function applySnapshot(snap: ShellSnapshot): void {
		const seq = snap.snapshotSequence;
		const incoming = new Map(snap.threads.map((t) => [t.id, t]));
		for (const id of [...threads.keys()])
			if (!incoming.has(id)) removeThread(id, seq);
		for (const thread of incoming.values()) {
			const previous = threads.get(thread.id);
			if (previous && JSON.stringify(previous) === JSON.stringify(thread))
				continue;
			upsertThread(thread, seq);
		}
		projects.clear();
		forgetProjectList();
		for (const p of snap.projects) setProject(p);
		// Authoritative: even a lower sequence wins (the server's store may have been reset).
		lastSeq = seq;
		haveState = true;
		emit({ kind: "snapshot", sequence: seq });
	}

	return {
		projects: () => {
			projectList ??= [...projects.values()];
			return projectList;
		},
		threads: () => [...threads.values()],
		thread: (id) => threads.get(id),
		sequence: () => lastSeq,
		hasState: () => haveState,
		noteProject: setProject,
		applySnapshot,
		apply(item) {
			if (item.kind === "snapshot") {
				const snap = item.snapshot;
				if (item.resolvedRepositoryIdentityRoots) {
					// Metadata-only refresh: re-enriched projects; its empty thread list means nothing.
					for (const p of snap.projects) setProject(p);
					return;
				}
				applySnapshot(snap);
				return;
			}
			// Sequence-bearing deltas: replays overlap, drop what we already applied (§8.1).
			if (item.sequence <= lastSeq) return;
			lastSeq = item.sequence;
			switch (item.kind) {
				case "project.updated":
					setProject(item.project);
					return;
				case "project.removed":
					projects.delete(item.projectId);
					forgetProjectList();
					return;
				case "thread.updated":
					// Pre-release servers announce archiving as an update in the archive (OBSERVED §6.6 #30).
					if (item.location !== "active")
						removeThread(item.thread.id, item.sequence);
					else upsertThread(compactThreadShell(item.thread), item.sequence);
					return;
				case "thread.removed":
					removeThread(item.threadId, item.sequence);
					return;
			}
		},
	};
}
