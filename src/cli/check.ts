/** `check`: validate the config and probe every machine (filled in by the shipping work). */
export async function runCheck(_argv: string[]): Promise<number> {
	process.stderr.write("check: not implemented yet\n");
	return 1;
}
