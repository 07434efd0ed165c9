/**
 * Ids that go into a T3 URL path (`/api/orchestration/threads/:id`). Percent-encoding makes any
 * character safe except what the URL parser still resolves as a path: `.` and `..` climb out
 * of the route (`threads/..` is `GET /api/orchestration/` with the machine's bearer), and some
 * clients and proxies treat `\` like `/`. Those are refused; everything else, `%` included (T3's
 * own ids contain `%3A`), is encoded. The tool schemas use the same check, so a bad id is an
 * argument error before anything is looked up.
 */

/** Why `id` cannot be one URL path segment, or null when it can. */
export function pathSegmentProblem(id: string): string | null {
	if (id === "") return "must not be empty";
	if (id === "." || id === "..") return `"${id}" is not an id`;
	if (id.includes("/") || id.includes("\\")) return "must not contain / or \\";
	return null;
}

/** `id` as one percent-encoded path segment; throws when it cannot be one. */
export function pathSegment(
	id: string,
	onProblem: (why: string) => Error,
): string {
	const problem = pathSegmentProblem(id);
	if (problem !== null) throw onProblem(problem);
	return encodeURIComponent(id);
}
