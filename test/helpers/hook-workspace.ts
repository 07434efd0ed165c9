/**
 * Where the operator's hook commands run in tests: a temporary directory holding a `t3code.toml`
 * without machines, and a webhook receiver. Call at a test file's top level: both are made
 * before all its tests and gone after them.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Receiver, startReceiver } from "./receiver.ts";

export interface HookWorkspace {
	/** The directory (its `t3code.toml` has no machines). */
	readonly dir: string;
	readonly receiver: Receiver;
}

export function hookWorkspace(prefix: string): HookWorkspace {
	let dir: string | undefined;
	let receiver: Receiver | undefined;
	beforeAll(() => {
		dir = mkdtempSync(join(tmpdir(), prefix));
		writeFileSync(join(dir, "t3code.toml"), "# no machines\n");
		receiver = startReceiver();
	});
	afterAll(async () => {
		await receiver?.stop();
		if (dir) rmSync(dir, { recursive: true, force: true });
	});
	const made = <T>(value: T | undefined): T => {
		if (value === undefined) throw new Error("hookWorkspace: used before all");
		return value;
	};
	return {
		get dir() {
			return made(dir);
		},
		get receiver() {
			return made(receiver);
		},
	};
}
