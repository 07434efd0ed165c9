/**
 * Room `t3/derive/`: what a thread's read models mean, as pure functions: run outcome and failure,
 * the pending question, a run's timeline, request kinds, who started a run. May import
 * `t3/model.ts` and `util/` only.
 */
/**
 * What a user wants to know about a thread, derived from the read models (PROTOCOL.md §7.4,
 * OBSERVED.md §5.6–§5.7): run outcome, final answer, failure text, the pending question or
 * approval, and a run's timeline. Pure functions; used by the MCP tools and by events.
 */

export {
	type PendingQuestionView,
	pendingQuestion,
	type QuestionContext,
	questionOptionValue,
} from "./pending-question.ts";
export {
	currentStep,
	finalAssistantMessage,
	type RunDetails,
	runDetails,
	toolTitle,
} from "./run-details.ts";
export {
	findRunByMessageId,
	latestRun,
	type RunOutcome,
	runError,
	runOutcome,
	settledOrdinal,
} from "./run-outcome.ts";
export { type ThreadActivity, threadActivity } from "./thread-activity.ts";
export { capText, TRUNCATION_MARKER } from "./truncation.ts";
