/**
 * One launch of the helper: spawn it, feed its stdin (a plan), stream both
 * pipes under the cap, enforce the timeout and cancellation, wait until the
 * whole tree is reaped, then turn its end into one outcome. `run.ts` builds
 * the argv (one command or a plan) and calls this.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { BoundedCapture, drainInto } from "./capture.ts";
import { classifyLaunch } from "./classify.ts";
import type { LaunchPlan } from "./launcher.ts";
import { OUTPUT_LOOKAHEAD_BYTES, renderWithRedactorInSlices } from "./output.ts";
import { readStatusRecord, type StageStatus } from "./plan.ts";
import { encodeHelperRequest, type WarmHelper } from "./warm_helper.ts";
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
  /** The helper started ahead of the next call, or null to spawn one per call. */
  readonly warm: WarmHelper | null;
}

/** A run in flight, as the executor tracks it for shutdown. */
export interface RunHandle {
  stop(reason: StopReason): void;
}

const RESEND_INTERVAL_MS = 100;

/** What `launch` spawns, and how to read its end. */
export interface LaunchSpec {
  readonly name: string;
  /** The single command's path (to tell "it could not be executed" apart), or null for a plan. */
  readonly commandPath: string | null;
  readonly argv: readonly string[];
  readonly env: Record<string, string>;
  /** Bytes for the helper's stdin (a plan, or one command's input), or null for /dev/null. */
  readonly stdin: Uint8Array | null;
  /** The plan's status record to split off stderr, or null. */
  readonly record: { readonly nonce: string; readonly stages: number } | null;
  /**
   * The request's start signal (`ExecRequest.go`): stdin gets the go byte
   * (one command, its stdin text after it) or the plan only once it
   * resolves true; false closes stdin unwritten, and the helper ends
   * having executed nothing.
   */
  readonly go?: Promise<boolean> | undefined;
}

/** What the helper waits for on stdin before it executes a command (`--go`). */
const GO_BYTE = new Uint8Array([0x67]); // "g"

/** Room for the status record at the end of a plan's stderr (64 stages fit easily). */
const RECORD_TAIL_BYTES = 4096;

export type Common = Pick<
  ExecRequest,
  "redactor" | "signal" | "cwd" | "timeoutMs" | "live" | "go"
>;

/**
 * The launch plan for one request: with a deadline of its own, the helper's
 * backstop moves by the same amount, keeping its slack over the server's timer.
 */
export function planForRequest(settings: RunSettings, request: Common): LaunchPlan {
  if (request.timeoutMs === undefined) return settings.plan;
  const slack = settings.plan.backstopMs - settings.policy.limits.timeoutMs;
  return { ...settings.plan, backstopMs: request.timeoutMs + slack };
}

export function refusedBeforeStart(
  request: Common,
  paths: readonly string[],
  name: string,
  started: number,
): ExecOutcome | null {
  const elapsed = Math.round(performance.now() - started);
  if (request.signal?.aborted) {
    return emptyOutcome(
      "CANCELLED",
      request.redactor.redact(`The call was cancelled before "${name}" started.`),
      elapsed,
    );
  }
  for (const path of paths) {
    if (binaryMissing(path)) {
      return emptyOutcome(
        "EXECUTOR_ERROR",
        request.redactor.redact(`Cannot run "${name}": ${path} no longer exists.`),
        elapsed,
      );
    }
  }
  return null;
}

export async function launch(
  settings: RunSettings,
  request: Common,
  track: (handle: RunHandle) => () => void,
  started: number,
  spec: LaunchSpec,
): Promise<{ outcome: ExecOutcome; statuses: StageStatus[] | null }> {
  const { policy } = settings;
  const { name } = spec;
  const elapsed = () => Math.round(performance.now() - started);
  const refuse = (code: ExecOutcomeCode, reason: string) => ({
    outcome: emptyOutcome(code, request.redactor.redact(reason), elapsed()),
    statuses: null,
  });
  const [head, ...rest] = spec.argv as [string, ...string[]];

  // One command on a go may take the helper started ahead of it: it reads
  // this call's argv, cwd and env from stdin, so Deno's spawn is not on the
  // call's path. Plans and calls without a go spawn their own.
  // Encoded only when a helper waits: no work on the call's path for nothing.
  const helperRequest = settings.warm?.ready(head) && spec.go !== undefined &&
      spec.commandPath !== null
    ? encodeHelperRequest(request.cwd, spec.env, rest)
    : null;
  const taken = helperRequest === null ? null : settings.warm!.take(head);
  let child: Deno.ChildProcess;
  try {
    child = taken ?? new Deno.Command(head, {
      args: rest,
      cwd: request.cwd,
      clearEnv: true,
      env: spec.env,
      stdin: spec.stdin === null && spec.go === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      // Not `detached`: the helper's own setsid gives the new session (no
      // controlling terminal, no signal from the server's terminal), and
      // `detached` would make Deno fork its whole process per call instead
      // of a vfork-style spawn (launcher.ts says why and what it costs).
    }).spawn();
  } catch (error) {
    return refuse(...spawnFailure(error, name, head, request.cwd));
  }
  // Settles true once the command may start (at once without a go).
  const goAhead = spec.go === undefined ? Promise.resolve(true) : spec.go.catch(() => false);
  if (spec.stdin !== null || spec.go !== undefined) {
    // A plan: the helper reads all of it before anything starts; should it
    // fail first, the write fails and its exit status tells why. One
    // command's stdin text: a command that exits without reading it ends
    // the write with a broken pipe, which is not an error of the call.
    // With a go, nothing is written until it comes: the helper waits.
    const writer = child.stdin.getWriter();
    const plan = spec.commandPath === null;
    // Written at once: the helper sets up the containment while the go waits.
    if (taken !== null) writer.write(helperRequest!).catch(() => {});
    goAhead.then(async (go) => {
      if (!go) return;
      if (plan || spec.go === undefined) return writer.write(spec.stdin ?? new Uint8Array());
      await writer.write(spec.stdin === null ? GO_BYTE : withGoByte(spec.stdin));
      // The command runs now and the server waits for it: the next call's
      // helper is spawned here, off every call's path.
      settings.warm?.refill();
    }).then(() => writer.close()).catch(() => {});
  }

  const cap = policy.limits.maxOutputBytes;
  const out = new BoundedCapture(cap + OUTPUT_LOOKAHEAD_BYTES);
  const err = new BoundedCapture(
    cap + OUTPUT_LOOKAHEAD_BYTES,
    spec.record === null ? 0 : RECORD_TAIL_BYTES,
  );
  const stopReading = new AbortController();
  const live = request.live;
  const drained = Promise.all([
    drainInto(child.stdout, out, stopReading.signal, live && ((c) => live.push("stdout", c))),
    drainInto(child.stderr, err, stopReading.signal, live && ((c) => live.push("stderr", c))),
  ]);
  const timeoutMs = request.timeoutMs ?? policy.limits.timeoutMs;

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
    // The helper blocks SIGALRM from its first instruction and waits for it,
    // so one request is enough; repeating it is harmless and covers a
    // helper that is still being exec'd.
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
  const timer = setTimeout(() => stop("timeout"), timeoutMs);
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
  // The helper's exit means the namespace is empty, so the pipes reach EOF
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
  if (!(await goAhead)) {
    // The helper ended at the missing go: no program of the call ran.
    return refuse("CANCELLED", `The call was stopped before "${name}" started.`);
  }

  let statuses: StageStatus[] | null = null;
  if (spec.record !== null && stopReason === null) {
    const record = readStatusRecord(err.tail(), spec.record.nonce, spec.record.stages);
    if (record !== null) {
      statuses = record.statuses;
      err.dropLast(record.recordBytes);
    }
  }

  const render = (capture: BoundedCapture) =>
    renderWithRedactorInSlices(capture.bytes(), capture.totalBytes, cap, request.redactor);
  // Redaction of a large output runs in slices that yield to the event loop,
  // so one big answer does not stall every other client of the server.
  const [stdout, stderr] = await Promise.all([render(out), render(err)]);
  const truncated = stdout.truncated || stderr.truncated;
  const base = {
    stdout: stdout.text,
    stderr: stderr.text,
    stdoutBytes: out.totalBytes,
    stderrBytes: err.totalBytes,
    truncated,
    durationMs,
  };

  // The helper's backstop fired (the server's timer did not): same meaning.
  const backstop = stopReason === null && status.code === 137 &&
    durationMs >= timeoutMs;
  const reasonNow: StopReason | null = backstop ? "timeout" : stopReason;
  const held = pipesHeld
    ? " Its output pipes stayed open after the launcher exited, so a process of this call may have outlived it."
    : "";
  if (reasonNow !== null) {
    const code: ExecOutcomeCode = reasonNow === "timeout" ? "TIMEOUT" : "CANCELLED";
    return {
      outcome: {
        ...base,
        code,
        exitCode: null,
        signal: "SIGKILL",
        reason: stopSentence(reasonNow, name, timeoutMs) + held,
      },
      statuses: null,
    };
  }

  // A plan that reported its stages ran, whatever its stderr says.
  if (statuses === null) {
    const stderrHead = new TextDecoder().decode(err.bytes().subarray(0, 4096));
    const verdict = classifyLaunch(status.code, stderrHead, spec.commandPath);
    if (verdict.kind === "missing_binary") {
      return refuse(
        "EXECUTOR_ERROR",
        `Cannot run "${name}": ${spec.commandPath} could not be executed (${verdict.detail}).`,
      );
    }
    if (verdict.kind === "setup_failed" && taken !== null && CHDIR_FAILED.test(verdict.detail)) {
      // The helper's chdir is what Deno's spawn did: the same answer.
      return refuse(...cwdGone(name, request.cwd));
    }
    if (verdict.kind === "setup_failed") {
      return refuse(
        "CONTAINMENT_UNAVAILABLE",
        `"${name}" was not started: the process containment could not be set up (${verdict.detail}).`,
      );
    }
    if (spec.record !== null) {
      return refuse(
        "EXECUTOR_ERROR",
        `The plan "${name}" ended without reporting its stages (exit status ${status.code}).`,
      );
    }
  }
  if (status.signal !== null) {
    // The helper itself was signalled by something other than us.
    return {
      outcome: {
        ...base,
        code: truncated ? "OUTPUT_TRUNCATED" : "OK",
        exitCode: null,
        signal: status.signal,
        reason: request.redactor.redact(`"${name}" was ended by ${status.signal}.${held}`),
      },
      statuses,
    };
  }
  const exitSentence = `"${name}" exited with status ${status.code}`;
  return {
    outcome: {
      ...base,
      code: truncated ? "OUTPUT_TRUNCATED" : "OK",
      exitCode: status.code,
      signal: null,
      reason: request.redactor.redact(
        truncated
          ? `${exitSentence}; its output exceeded the ${cap}-byte cap and was cut.${held}`
          : `${exitSentence}.${held}`,
      ),
    },
    statuses,
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

/**
 * True only when the binary is positively gone; a refused stat proves nothing.
 * Synchronous: the path is the policy's resolved binary on the host (never the
 * model's input), and one stat of it costs far less than a trip through the
 * runtime's thread pool on every call.
 */
function binaryMissing(path: string): boolean {
  try {
    Deno.statSync(path);
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
    if (error.message.includes("No such cwd")) return cwdGone(name, cwd);
    return [
      "CONTAINMENT_UNAVAILABLE",
      `"${name}" was not started: the launcher ${launcher} is missing.`,
    ];
  }
  const message = error instanceof Error ? error.message : String(error);
  return ["EXECUTOR_ERROR", `Cannot run "${name}": the launcher failed to start (${message}).`];
}

/** A helper started ahead found the call's working folder gone (its `chdir` failed). */
const CHDIR_FAILED = /^htmcp-spawn: chdir /;

function cwdGone(name: string, cwd: string): [ExecOutcomeCode, string] {
  return ["EXECUTOR_ERROR", `Cannot run "${name}": the working directory ${cwd} is gone.`];
}

/** One command's stdin text behind the go byte, in one write. */
function withGoByte(text: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(text.byteLength + 1);
  bytes.set(GO_BYTE);
  bytes.set(text, 1);
  return bytes;
}
