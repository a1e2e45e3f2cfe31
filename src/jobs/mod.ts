/**
 * Long-running work: jobs that outlive their request, their durable records,
 * progress text and output sized for a model (docs/jobs.md).
 *
 * @module
 */
export {
  CANCEL_WAIT_MS,
  type HeldJob,
  type JobContext,
  type JobLaunch,
  JobManager,
  jobsFor,
  type RunningJob,
} from "./manager.ts";
export { HEARTBEAT_MS, JobStore, LOST_AFTER_MS, type SweepReport } from "./store.ts";
export {
  isJobRecord,
  isLiveState,
  jobNotFound,
  type JobOrigin,
  type JobOutput,
  type JobRecord,
  type JobState,
  type JobView,
  jobView,
  newJobId,
} from "./records.ts";
export { lastLines, LIVE_WINDOW_BYTES, LiveOutput, TAIL_BYTES, TAIL_LINES } from "./live_output.ts";
export { capStored, headAndTail, type InlineText, type Page, pageOf } from "./paging.ts";
// A job's run ends in the result envelope every command tool returns, and
// its live output is the executor's observer: both named by what is above.
export type { CommandResult, StageResult } from "../result/codes.ts";
export type { OutputObserver } from "../exec/mod.ts";
