/**
 * How often the connector's WAL has been restarted from its start (after a checkpoint): the
 * checkpoint sequence number in the WAL header (sqlite's file format, "WAL file format").
 * Until the first restart the WAL grows, and every sync also writes the file's new size and
 * blocks (a metadata journal commit, slow on a fresh disk); a long-running server's WAL has
 * long stopped growing.
 */
import { closeSync, openSync, readSync } from "node:fs";

export function walRestarts(statePath: string): number {
	let fd: number;
	try {
		fd = openSync(`${statePath}-wal`, "r");
	} catch {
		return 0;
	}
	try {
		const header = Buffer.alloc(16);
		if (readSync(fd, header, 0, 16, 0) < 16) return 0;
		return header.readUInt32BE(12);
	} finally {
		closeSync(fd);
	}
}
