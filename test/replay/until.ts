/** Await a condition without sleeping a fixed time: poll every few ms, fail after `timeoutMs`. */
export async function until(
	predicate: () => boolean,
	timeoutMs = 5_000,
	what = "condition",
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!predicate()) {
		if (Date.now() > deadline)
			throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
}
