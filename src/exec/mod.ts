/**
 * The executor: runs allowed commands as contained process trees (and, in
 * bwrap mode, inside the kernel sandbox), with a clean environment, a
 * timeout, output caps and redaction before truncation.
 *
 * Denies on failure: if containment cannot be set up at startup,
 * `createExecutor` fails; if it fails for one call, that call returns
 * `CONTAINMENT_UNAVAILABLE` and the command does not run.
 *
 * @example
 * ```ts
 * import type { Policy } from "../config/mod.ts";
 * import { createRedactor } from "../redact/mod.ts";
 * import { createExecutor } from "./mod.ts";
 * declare const policy: Policy; // from loadPolicy
 * const built = await createExecutor(policy);
 * if (!built.ok) throw new Error(built.message); // the server does not start
 * const ls = policy.allowlist.get("ls");
 * if (ls === undefined) throw new Error('"ls" is not on the allowlist');
 * const outcome = await built.executor.run({
 *   callId: "1",
 *   command: ls,
 *   args: ["-la"],
 *   cwd: policy.jailRoot,
 *   // The server's one redactor: output is redacted, then cut at the cap.
 *   redactor: createRedactor(policy.redaction),
 * });
 * outcome.code; // "OK", "TIMEOUT", "OUTPUT_TRUNCATED", ...
 * await built.executor.shutdown();
 * ```
 *
 * @module
 */
export { createExecutor, type ExecutorOptions } from "./executor.ts";
export {
  buildCallLaunch,
  buildPlanLaunch,
  type CallLaunch,
  chainEnvironment,
  chainTools,
  DEFAULT_LAUNCHER_TOOLS,
  launcherPaths,
  launcherReadPaths,
  type LauncherTools,
  type LaunchPlan,
  type LaunchTarget,
  type NamespacePrivilege,
  rlimitOptions,
  type RunAs,
  SANDBOX_HELPER_PATH,
  SANDBOX_TOOL_ENV,
  sandboxArgv,
  type SandboxCall,
} from "./launcher.ts";
export {
  type CommandPlan,
  type Connector,
  encodePlan,
  MAX_PLAN_STAGES,
  type PlanStage,
  type PlanStep,
  type Redirect,
  type StageStatus,
} from "./plan.ts";
export type { PlanOutcome, PlanRequest } from "./run.ts";
export {
  DEFAULT_HELPER_PATH,
  HELPER_MANIFEST,
  HELPER_SOURCE,
  type HelperCheck,
  verifyHelper,
} from "./spawn/helper.ts";
export {
  OUTPUT_LOOKAHEAD_BYTES,
  type RenderedOutput,
  renderWithRedactor,
  truncationMarker,
} from "./output.ts";
export { BoundedCapture } from "./capture.ts";
export type {
  CommandHardening,
  CreateExecutorResult,
  ExecOutcome,
  ExecOutcomeCode,
  ExecRequest,
  Executor,
  ExecutorDescription,
  OutputObserver,
  ProbeResult,
} from "./types.ts";
