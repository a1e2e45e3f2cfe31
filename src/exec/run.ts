/**
 * One contained run (a command, or a plan of several): spawn the launcher
 * helper, stream both pipes under the cap, enforce the timeout and
 * cancellation, and return only after the whole process tree is dead and
 * reaped.
 *
 * Why the return is safe to trust: the helper is the parent of the PID
 * namespace's init and waits for it; the kernel reports that init's exit only
 * after every process in the namespace has been killed and released. Deno
 * reaping the helper therefore means no process the call started is alive,
 * not even a zombie. Our kill request is SIGALRM to the helper (the same as
 * its own backstop: SIGKILL to the init, then wait); SIGKILL to the helper is
 * only a last resort if that never completes, in which case the tree still
 * dies through PR_SET_PDEATHSIG.
 *
 * Output beyond the cap is read and counted, then discarded: memory stays at
 * cap + lookahead per stream, and a flood costs CPU only until the timeout
 * (or `limits.cpu_seconds`) ends it. Not reading would block the writer and
 * turn a merely verbose command into a TIMEOUT.
 *
 * @module
 */
import { buildCallLaunch, buildPlanLaunch } from "./launcher.ts";
import { planNonce, planStageCount } from "./plan.ts";
import {
  launch,
  planForRequest,
  refusedBeforeStart,
  type RunHandle,
  type RunSettings,
} from "./launch_once.ts";
import type { ExecOutcome, ExecRequest, PlanOutcome, PlanRequest } from "./types.ts";

export type { PlanOutcome, PlanRequest } from "./types.ts";

export { emptyOutcome, type RunHandle, type RunSettings, type StopReason } from "./launch_once.ts";

/**
 * Runs `request` contained. Never throws for an expected failure.
 *
 * @param settings The executor's fixed settings.
 * @param request The checked command.
 * @param track Called with a handle once the tree exists; returns the untrack function.
 */
export async function runContained(
  settings: RunSettings,
  request: ExecRequest,
  track: (handle: RunHandle) => () => void,
): Promise<ExecOutcome> {
  const started = performance.now();
  const name = request.command.name;
  const early = refusedBeforeStart(request, [request.command.path], name, started);
  if (early !== null) return early;
  const hardening = settings.hardening?.(request.command) ?? null;
  const args = [...(hardening?.prependArgs ?? []), ...request.args];
  const commandEnv = {
    ...settings.policy.childEnv,
    ...(request.env ?? {}),
    ...(hardening?.env ?? {}),
  };
  const callLaunch = buildCallLaunch(planForRequest(settings, request), settings.policy, {
    path: request.command.path,
    args,
    cwd: request.cwd,
    env: commandEnv,
    stdinText: request.stdin !== undefined,
    ...(request.go === undefined ? {} : { go: request.stdin === undefined ? "null" : "stdin" }),
  });
  const { outcome } = await launch(settings, request, track, started, {
    name,
    commandPath: request.command.path,
    launch: callLaunch,
    // The helper leaves fd 0 as it found it for one command, so a pipe
    // here reaches the command (through every sandbox layer, which keep
    // stdin too); without stdin text the command reads /dev/null.
    stdin: request.stdin ?? null,
    record: null,
    go: request.go,
  });
  return outcome;
}

/**
 * Runs a plan (pipelines, sequences, cd, redirections) inside one
 * containment: one PID namespace (and one sandbox) for every stage, stages
 * joined by kernel pipes. The timeout, caps and cancellation apply to the
 * plan as a whole; its exit status is that of the last step run (the last
 * stage of a pipeline: no pipefail), and `stages` holds every stage's.
 *
 * @param settings The executor's fixed settings.
 * @param request The checked plan.
 * @param track Called with a handle once the tree exists; returns the untrack function.
 */
export async function runPlanContained(
  settings: RunSettings,
  request: PlanRequest,
  track: (handle: RunHandle) => () => void,
): Promise<PlanOutcome> {
  const started = performance.now();
  if (request.plan.cwd !== request.cwd) {
    throw new RangeError("A plan's cwd must be the request's cwd.");
  }
  const paths = request.plan.steps.flatMap(({ step }) =>
    step.kind === "pipeline" ? step.stages.map((s) => s.path) : []
  );
  const early = refusedBeforeStart(request, paths, request.name, started);
  if (early !== null) return { ...early, stages: [] };
  const nonce = planNonce();
  const commandEnv = { ...settings.policy.childEnv, ...(request.env ?? {}) };
  const { launch: callLaunch, stdin } = buildPlanLaunch(
    planForRequest(settings, request),
    settings.policy,
    request.plan,
    nonce,
    commandEnv,
  );
  const { outcome, statuses } = await launch(settings, request, track, started, {
    name: request.name,
    commandPath: null,
    launch: callLaunch,
    stdin,
    record: { nonce, stages: planStageCount(request.plan) },
    go: request.go,
  });
  return { ...outcome, stages: statuses ?? [] };
}
