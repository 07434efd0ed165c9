/** The result rows every benchmark returns, and the plain-text table `bun run bench` prints. */
export interface Row {
	figure: string;
	value: string;
	baseline: string;
	ratio: string;
	target: string;
	/** null = no target (informational). */
	pass: boolean | null;
}

export const ratio = (value: number, base: number) =>
	Number.isFinite(value / base) ? `${(value / base).toFixed(2)}×` : "-";

export function renderTable(rows: Row[]): string {
	const head = [
		"figure",
		"value(s)",
		"baseline",
		"ratio",
		"target",
		"pass/miss",
	];
	const cells = rows.map((r) => [
		r.figure,
		r.value,
		r.baseline,
		r.ratio,
		r.target,
		r.pass === null ? "-" : r.pass ? "pass" : "MISS",
	]);
	const widths = head.map((h, i) =>
		Math.max(h.length, ...cells.map((c) => (c[i] as string).length)),
	);
	const line = (c: string[]) =>
		`| ${c.map((x, i) => x.padEnd(widths[i] as number)).join(" | ")} |`;
	return [
		line(head),
		`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
		...cells.map(line),
	].join("\n");
}
