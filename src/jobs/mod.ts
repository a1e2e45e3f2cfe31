/**
 * Long-running work: jobs that outlive their request, their durable records,
 * progress text and output sized for a model (docs/jobs.md).
 *
 * @module
 */
export {
  CANCEL_WAIT_MS,
  type HeldJob,
  type JobLaunch,
  JobManager,
  jobsFor,
  type RunningJob,
} from "./manager.ts";
export { HEARTBEAT_MS, JobStore, LOST_AFTER_MS } from "./store.ts";
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
