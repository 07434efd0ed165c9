/**
 * The state every part of the simulator shares: resolved options, the store, the engine,
 * auth, and the fault-injection knobs (delay, blackhole, dropped replies) plus the wire log.
 */

import type { SimCompat } from "./compat.ts";
import type { AttachmentStore } from "./engine/attachments.ts";
import type { Engine } from "./engine/engine.ts";
import type { ProjectMutations } from "./engine/project-create.ts";
import type { Scheduler } from "./engine/scheduler.ts";
import type { Store } from "./engine/store.ts";
import type { OutcomeTimes } from "./runs/outcome-times.ts";
import type { SimFrame } from "./types.ts";
import type { Auth } from "./wire/auth.ts";
import type { SimConfigState } from "./wire/config-stream.ts";
import type { Hostile } from "./wire/hostile.ts";

export interface SimContext {
	protocol: 1 | 2 | 3;
	/** Which T3 Code this simulator imitates (compat.ts). */
	compat: SimCompat;
	coalesceMs: number;
	/** The descriptor's `serverResolvedCommandContext`; undefined: not in the descriptor. */
	commandContext: boolean | undefined;
	serverVersion: string;
	label: string;
	environmentId: string;
	store: Store;
	engine: Engine;
	/** `assets.persistChatAttachments` and the references messages carry. */
	attachments: AttachmentStore;
	/** `projects.mutate` (project.create). */
	projectMutations: ProjectMutations;
	auth: Auth;
	scheduler: Scheduler;
	outcomes: OutcomeTimes;
	/** Providers `server.getConfig` reports, and the config stream subscribers. */
	config: SimConfigState;
	faults: {
		blackholed: boolean;
		delayMs: number;
		/** RPC tag → how many upcoming requests lose their reply. */
		dropReplies: Map<string, number>;
		/** Command type → how many upcoming `dispatchCommand`s of it are refused unrun. */
		refuseCommands: Map<string, number>;
	};
	wire: {
		recording: boolean;
		frames: SimFrame[];
		requests: Record<string, number>;
	};
	count(key: string): void;
	/** Set in the hostile mode: rewrites everything sent (hostile.ts). */
	hostile?: Hostile;
}
