/**
 * One process per state file: an exclusive `flock` on `<state>.lock`, held for the process's
 * lifetime. The kernel drops it when the process dies (kill -9 included), so there are no stale
 * locks to clean up. The holder writes its pid (and host) into the file so the one refused can
 * name it. Node has no flock, so it comes from libc through bun:ffi.
 */
import { dlopen, FFIType, read } from "bun:ffi";
import {
	closeSync,
	ftruncateSync,
	openSync,
	readFileSync,
	writeSync,
} from "node:fs";
import { hostname } from "node:os";

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

export interface StateLock {
	/** The lock file. */
	file: string;
	release(): void;
}

export type LockAttempt =
	| { held: false; lock: StateLock }
	| { held: true; file: string; holder: string };

interface Libc {
	flock(fd: number, op: number): number;
	errno(): number;
}

let libc: Libc | undefined;

function loadLibc(): Libc {
	if (libc) return libc;
	const darwin = process.platform === "darwin";
	const errnoName = darwin ? "__error" : "__errno_location";
	const lib = dlopen(darwin ? "libSystem.B.dylib" : "libc.so.6", {
		flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
		[errnoName]: { args: [], returns: FFIType.ptr },
	});
	const errnoPtr = lib.symbols[errnoName] as () => number | null;
	libc = {
		flock: (fd, op) => lib.symbols.flock(fd, op) as number,
		errno: () => {
			const ptr = errnoPtr();
			return ptr ? read.i32(ptr as never, 0) : 0;
		},
	};
	return libc;
}

/** EWOULDBLOCK: Linux 11, macOS 35. */
const WOULD_BLOCK = new Set([11, 35]);

export function lockFileOf(statePath: string): string {
	return `${statePath}.lock`;
}

/**
 * Takes the lock or reports who holds it. Throws the `open` error (EROFS, EACCES, ENOENT…)
 * when the lock file cannot be created.
 */
export function lockState(statePath: string): LockAttempt {
	const file = lockFileOf(statePath);
	const { flock, errno } = loadLibc();
	const fd = openSync(file, "a+");
	// `check` holds a shared lock for an instant; a few short retries ride that out.
	let locked = flock(fd, LOCK_EX | LOCK_NB) === 0;
	for (let i = 0; !locked && i < 4 && WOULD_BLOCK.has(errno()); i++) {
		Bun.sleepSync(25);
		locked = flock(fd, LOCK_EX | LOCK_NB) === 0;
	}
	if (!locked) {
		const code = errno();
		closeSync(fd);
		if (!WOULD_BLOCK.has(code))
			throw Object.assign(new Error(`flock ${file} failed (errno ${code})`), {
				code: "EFLOCK",
			});
		return { held: true, file, holder: readHolder(file) };
	}
	ftruncateSync(fd, 0);
	writeSync(fd, `pid ${process.pid} on host ${hostname()}\n`);
	let released = false;
	return {
		held: false,
		lock: {
			file,
			release() {
				if (released) return;
				released = true;
				flock(fd, LOCK_UN);
				closeSync(fd);
			},
		},
	};
}

/**
 * Whether a live process holds the lock, without keeping it (`check`). Never creates the
 * lock file; null when it cannot tell (no lock file: nobody ever held it).
 */
export function probeLock(
	statePath: string,
): { held: boolean; holder: string } | null {
	const file = lockFileOf(statePath);
	let fd: number;
	try {
		fd = openSync(file, "r");
	} catch {
		return null;
	}
	try {
		const { flock } = loadLibc();
		// A shared lock is enough to see an exclusive holder and never blocks a starting server
		// for longer than this call.
		if (flock(fd, LOCK_SH | LOCK_NB) !== 0)
			return { held: true, holder: readHolder(file) };
		flock(fd, LOCK_UN);
		return { held: false, holder: readHolder(file) };
	} finally {
		closeSync(fd);
	}
}

function readHolder(file: string): string {
	try {
		const text = readFileSync(file, "utf8").trim();
		return text === "" ? "another process" : text;
	} catch {
		return "another process";
	}
}
