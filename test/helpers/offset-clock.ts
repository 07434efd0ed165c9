/**
 * A clock that runs with real time and can be moved ahead (`advance`): timers fire when real time
 * reaches them or when an advance passes them, whichever comes first. For tests of times ahead
 * (a held dispatch's not_before) in a stack whose sims run in real time.
 */
import type { Clock } from "../../src/util/clock.ts";

export function offsetClock(): Clock & {
	advance(ms: number): void;
	stop(): void;
} {
	let offset = 0;
	let seq = 0;
	const timers = new Map<
		number,
		{ at: number; fn: () => void; handle: ReturnType<typeof setTimeout> }
	>();
	const now = () => Date.now() + offset;
	const fire = (id: number) => {
		const timer = timers.get(id);
		if (!timer) return;
		timers.delete(id);
		clearTimeout(timer.handle);
		timer.fn();
	};
	return {
		now,
		setTimer(fn, ms) {
			const id = ++seq;
			const wait = Math.max(0, ms);
			timers.set(id, {
				at: now() + wait,
				fn,
				handle: setTimeout(() => fire(id), wait),
			});
			return () => {
				const timer = timers.get(id);
				if (timer) clearTimeout(timer.handle);
				timers.delete(id);
			};
		},
		advance(ms) {
			offset += ms;
			const due = [...timers.entries()]
				.filter(([, t]) => t.at <= now())
				.sort((a, b) => a[1].at - b[1].at);
			for (const [id] of due) fire(id);
		},
		stop() {
			for (const t of timers.values()) clearTimeout(t.handle);
			timers.clear();
		},
	};
}
