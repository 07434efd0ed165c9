/**
 * Failed console sign-ins, counted per address (CONTRACT.md "Console"): after `max` failures in
 * `windowMs`, that address is refused until its oldest failure leaves the window. Memory is
 * bounded: past `maxAddresses` the address counted longest ago is forgotten first.
 */
export interface SignInLimit {
	/** Milliseconds until this address may try again; 0 when it may now. */
	waitMs(address: string): number;
	failed(address: string): void;
	succeeded(address: string): void;
}

export function createSignInLimit(
	now: () => number,
	{ max = 10, windowMs = 15 * 60_000, maxAddresses = 10_000 } = {},
): SignInLimit {
	const failures = new Map<string, number[]>();
	const recent = (address: string) => {
		const times = failures.get(address);
		if (!times) return [];
		const from = now() - windowMs;
		while (times.length > 0 && (times[0] as number) <= from) times.shift();
		if (times.length === 0) failures.delete(address);
		return times;
	};
	return {
		waitMs(address) {
			const times = recent(address);
			if (times.length < max) return 0;
			return Math.max(1, (times[0] as number) + windowMs - now());
		},
		failed(address) {
			const times = recent(address);
			times.push(now());
			failures.delete(address);
			failures.set(address, times);
			if (failures.size > maxAddresses)
				failures.delete(failures.keys().next().value as string);
		},
		succeeded(address) {
			failures.delete(address);
		},
	};
}
