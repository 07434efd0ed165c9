/**
 * A webhook body's shape for a snapshot (CONTRACT.md pins the bodies): every key kept, each value
 * replaced by its type (`type` and enum-like strings the caller names kept as they are), so the
 * snapshot pins the names and kinds without the run's ids and times.
 */
export function eventShape(
	value: unknown,
	keep: readonly string[] = ["type"],
	key = "",
): unknown {
	if (value === null) return null;
	if (Array.isArray(value))
		return value.length === 0 ? [] : [eventShape(value[0], keep)];
	if (typeof value === "object")
		return Object.fromEntries(
			Object.keys(value as object)
				.sort()
				.map((k) => [
					k,
					eventShape((value as Record<string, unknown>)[k], keep, k),
				]),
		);
	return keep.includes(key) ? value : typeof value;
}
