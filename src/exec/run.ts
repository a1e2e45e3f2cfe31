/**
 * One contained run: spawn the launcher chain, stream both pipes under the
 * cap, enforce the timeout and cancellation, and return only after the whole
 * process tree is dead and reaped.
 *
 * Why the return is safe to trust: the launcher's outer `timeout` is the
 * parent of the PID namespace's init and waits for it; the kernel reports
 * that init's exit only after every process in the namespace has been killed
 * and released. Deno reaping the launcher therefore means no process the call
 * started is alive, not even a zombie. Our kill request is SIGALRM to the
 * launcher (`timeout` treats it as its own deadline: SIGKILL to the init,
 * then wait); SIGKILL to the launcher is only a last resort if that never
 * completes, in which case the tree still dies through PR_SET_PDEATHSIG.
 *
 * Output beyond the cap is read and counted, then discarded: memory stays at
 * cap + lookahead per stream, and a flood costs CPU only until the timeout
 * (or `limits.cpu_seconds`) ends it. Not reading would block the writer and
 * turn a merely verbose command into a TIMEOUT.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { BoundedCapture, drainInto } from "./capture.ts";
import { classifyLaunch } from "./classify.ts";
import { buildLaunchArgv, chainEnvironment, type LaunchPlan } from "./launcher.ts";
import { OUTPUT_LOOKAHEAD_BYTES, renderOutput, renderWithRedactor } from "./output.ts";
import type { CommandHardening, ExecOutcome, ExecOutcomeCode, ExecRequest } from "./types.ts";

/** Why we ended a run ourselves. */
export type StopReason = "timeout" | "cancelled" | "shutdown";

/** Fixed per executor. */
export interface RunSettings {
  readonly plan: LaunchPlan;
  readonly policy: Policy;
  readonly hardening: ((command: ExecRequest["command"]) => CommandHardening) | null;
  /** How long to repeat the polite kill request before SIGKILLing the launcher. */
  readonly killGraceMs: number;
}

/** A run in flight, as the executor tracks it for shutdown. */
export interface RunHandle {
  stop(reason: StopReason): void;
}

const RESEND_INTERVAL_MS = 100;

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
  const { policy, plan } = settings;
  const name = request.command.name;
  const elapsed = () => Math.round(performance.now() - started);
  const refuse = (code: ExecOutcomeCode, reason: string): ExecOutcome =>
    emptyOutcome(code, request.redact(reason), elapsed());

  if (request.signal?.aborted) {
    return refuse("CANCELLED", `The call was cancelled before "${name}" started.`);
  }
  const missing = await binaryMissing(request.command.path);
  if (missing) {
    return refuse(
      "EXECUTOR_ERROR",
      `Cannot run "${name}": ${request.command.path} no longer exists.`,
    );
  }

  const hardening = settings.hardening?.(request.command) ?? null;
  const args = [...(hardening?.prependArgs ?? []), ...request.args];
  const commandEnv = { ...policy.childEnv, ...(request.env ?? {}), ...(hardening?.env ?? {}) };
  const env = chainEnvironment(plan, commandEnv);
  const argv = buildLaunchArgv(plan, policy, {
    path: request.command.path,
    args,
    cwd: request.cwd,
    env: commandEnv,
  });
  const [head, ...rest] = argv as [string, ...string[]];

  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(head, {
      args: rest,
      cwd: request.cwd,
      clearEnv: true,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // Not `detached`: the chain's own `setsid` gives the new session (no
      // controlling terminal, no signal from the server's terminal), and
      // `detached` would make Deno fork its whole process per call instead
      // of a vfork-style spawn (launcher.ts says why and what it costs).
    }).spawn();
  } catch (error) {
    return refuse(...spawnFailure(error, name, head, request.cwd));
  }

  const cap = policy.limits.maxOutputBytes;
  const out = new BoundedCapture(cap + OUTPUT_LOOKAHEAD_BYTES);
  const err = new BoundedCapture(cap + OUTPUT_LOOKAHEAD_BYTES);
  const stopReading = new AbortController();
  const drained = Promise.all([
    drainInto(child.stdout, out, stopReading.signal),
    drainInto(child.stderr, err, stopReading.signal),
  ]);

  let stopReason: StopReason | null = null;
  let exited = false;
  let resend: ReturnType<typeof setInterval> | undefined;
  let lastResort: ReturnType<typeof setTimeout> | undefined;
  const stop = (reason: StopReason) => {
    if (stopReason !== null || exited) return;
    stopReason = reason;
    const ask = () => {
      try {
        child.kill("SIGALRM");
      } catch {
        // Already exited: nothing to stop.
      }
    };
    ask();
    // A SIGALRM that lands before `timeout` has recorded its child's pid is
    // lost; repeating it is harmless once the kill is under way.
    resend = setInterval(ask, RESEND_INTERVAL_MS);
    lastResort = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already exited.
      }
    }, settings.killGraceMs);
  };
  const untrack = track({ stop });
  const timer = setTimeout(() => stop("timeout"), policy.limits.timeoutMs);
  const onAbort = () => stop("cancelled");
  request.signal?.addEventListener("abort", onAbort, { once: true });
  // An abort that landed while we were spawning fired no event: honour it now.
  if (request.signal?.aborted) stop("cancelled");

  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    exited = true;
    clearTimeout(timer);
    clearInterval(resend);
    clearTimeout(lastResort);
    request.signal?.removeEventListener("abort", onAbort);
    untrack();
  }
  // The launcher's exit means the namespace is empty, so the pipes reach EOF
  // at once. Should a pipe stay open anyway (only after the last-resort
  // SIGKILL, when the tree dies asynchronously), stop reading rather than hang.
  let pipesHeld = false;
  const readGuard = setTimeout(() => {
    pipesHeld = true;
    stopReading.abort();
  }, settings.killGraceMs);
  await drained;
  clearTimeout(readGuard);
  const durationMs = elapsed();

  const render = (capture: BoundedCapture) =>
    request.redactor === undefined
      ? renderOutput(capture.bytes(), capture.totalBytes, cap, request.redact)
      : renderWithRedactor(capture.bytes(), capture.totalBytes, cap, request.redactor);
  const stdout = render(out);
  const stderr = render(err);
  const truncated = stdout.truncated || stderr.truncated;
  const base = {
    stdout: stdout.text,
    stderr: stderr.text,
    stdoutBytes: out.totalBytes,
    stderrBytes: err.totalBytes,
    truncated,
    durationMs,
  };

  // The outer `timeout`'s backstop fired (the server's timer did not): same meaning.
  const backstop = stopReason === null && status.code === 137 &&
    durationMs >= policy.limits.timeoutMs;
  const reasonNow: StopReason | null = backstop ? "timeout" : stopReason;
  const held = pipesHeld
    ? " Its output pipes stayed open after the launcher exited, so a process of this call may have outlived it."
    : "";
  if (reasonNow !== null) {
    const code: ExecOutcomeCode = reasonNow === "timeout" ? "TIMEOUT" : "CANCELLED";
    return {
      ...base,
      code,
      exitCode: null,
      signal: "SIGKILL",
      reason: stopSentence(reasonNow, name, policy.limits.timeoutMs) + held,
    };
  }

  const stderrHead = new TextDecoder().decode(err.bytes().subarray(0, 4096));
  const verdict = classifyLaunch(status.code, stderrHead, request.command.path);
  if (verdict.kind === "missing_binary") {
    return refuse(
      "EXECUTOR_ERROR",
      `Cannot run "${name}": ${request.command.path} could not be executed (${verdict.detail}).`,
    );
  }
  if (verdict.kind === "setup_failed") {
    return refuse(
      "CONTAINMENT_UNAVAILABLE",
      `"${name}" was not started: the process containment could not be set up (${verdict.detail}).`,
    );
  }
  if (status.signal !== null) {
    // The launcher itself was signalled by something other than us.
    return {
      ...base,
      code: truncated ? "OUTPUT_TRUNCATED" : "OK",
      exitCode: null,
      signal: status.signal,
      reason: request.redact(`"${name}" was ended by ${status.signal}.${held}`),
    };
  }
  const exitSentence = `"${name}" exited with status ${status.code}`;
  return {
    ...base,
    code: truncated ? "OUTPUT_TRUNCATED" : "OK",
    exitCode: status.code,
    signal: null,
    reason: request.redact(
      truncated
        ? `${exitSentence}; its output exceeded the ${cap}-byte cap and was cut.${held}`
        : `${exitSentence}.${held}`,
    ),
  };
}

function stopSentence(reason: StopReason, name: string, timeoutMs: number): string {
  switch (reason) {
    case "timeout":
      return `"${name}" ran longer than the ${timeoutMs} ms limit; its process tree was killed.`;
    case "cancelled":
      return `The call was cancelled; "${name}" and its process tree were killed.`;
    case "shutdown":
      return `The server is shutting down; "${name}" and its process tree were killed.`;
  }
}

/** The outcome of a call that produced no output (it never started, or was refused). */
export function emptyOutcome(
  code: ExecOutcomeCode,
  reason: string,
  durationMs: number,
): ExecOutcome {
  return {
    code,
    stdout: "",
    stderr: "",
    exitCode: null,
    signal: null,
    stdoutBytes: 0,
    stderrBytes: 0,
    truncated: false,
    reason,
    durationMs,
  };
}

/** True only when the binary is positively gone; a refused stat proves nothing. */
async function binaryMissing(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return false;
  } catch (error) {
    return error instanceof Deno.errors.NotFound;
  }
}

function spawnFailure(
  error: unknown,
  name: string,
  launcher: string,
  cwd: string,
): [ExecOutcomeCode, string] {
  if (error instanceof Deno.errors.NotCapable) {
    return [
      "RUNTIME_DENIED",
      `Deno's permissions refused to start the launcher for "${name}" (${launcher}).`,
    ];
  }
  if (error instanceof Deno.errors.NotFound) {
    if (error.message.includes("No such cwd")) {
      return ["EXECUTOR_ERROR", `Cannot run "${name}": the working directory ${cwd} is gone.`];
    }
    return [
      "CONTAINMENT_UNAVAILABLE",
      `"${name}" was not started: the launcher ${launcher} is missing.`,
    ];
  }
  const message = error instanceof Error ? error.message : String(error);
  return ["EXECUTOR_ERROR", `Cannot run "${name}": the launcher failed to start (${message}).`];
}
