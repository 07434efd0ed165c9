/**
 * The Exit frames a connection ends a request with (PROTOCOL.md §4.2): an `Outcome` as a
 * Success or a Fail / Die cause, and the Interrupt cause an interrupted request ends with.
 */
import type { Outcome } from "../engine/engine.ts";

let fiberIds = 1000;

export function exitFrame(requestId: string, outcome: Outcome): unknown {
	if ("ok" in outcome)
		return {
			_tag: "Exit",
			requestId,
			exit: { _tag: "Success", value: outcome.ok },
		};
	const cause =
		"fail" in outcome
			? { _tag: "Fail", error: outcome.fail }
			: { _tag: "Die", defect: outcome.die };
	return { _tag: "Exit", requestId, exit: { _tag: "Failure", cause: [cause] } };
}

export const interruptFrame = (requestId: string) => ({
	_tag: "Exit",
	requestId,
	exit: {
		_tag: "Failure",
		cause: [{ _tag: "Interrupt", fiberId: fiberIds++ }],
	},
});
