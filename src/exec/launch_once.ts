/**
 * One launch: the serving helper starts the call with the argv `run.ts`
 * built (one command or a plan); this feeds its stdin (the go, the
 * input, a plan), keeps both output streams under the cap, enforces the
 * timeout and cancellation, waits until the whole tree is reaped, then turns
 * its end into one outcome.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { after, every, type Timer } from "../timers/mod.ts";
import { BoundedCapture } from "./capture.ts";
import { classifyLaunch } from "./classify.ts";
import type { CallLaunch, LaunchPlan } from "./launcher.ts";
import { OUTPUT_LOOKAHEAD_BYTES, renderWithRedactorInSlices } from "./output.ts";
import { readStatusRecord, type StageStatus } from "./plan.ts";
import type { SandboxAhead } from "./sandbox_ahead.ts";
import {
  type CallSinks,
  encodeSandboxRequest,
  type ServedCall,
  type ServingHelper,
  UnencodableRequest,
} from "./serving_helper.ts";
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
  /** The one helper every call is a fork of. */
  readonly helper: ServingHelper;
  /** bwrap mode: the sandbox made ahead of the next call, taken by it. */
  readonly ahead: SandboxAhead;
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
  /** The fork's argv, cwd and environment, and in bwrap mode the sandbox's request. */
  readonly launch: CallLaunch;
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
  const { sandbox } = spec.launch;
  const [head, ...rest] = spec.launch.argv as [string, ...string[]];
  if (head !== settings.helper.path) {
    // Every argv launch plans starts with the helper: anything else is a bug here.
    return refuse(
      "EXECUTOR_ERROR",
      `Cannot run "${name}": the launch plan does not start with the launcher.`,
    );
  }

  const cap = policy.limits.maxOutputBytes;
  const out = new BoundedCapture(cap + OUTPUT_LOOKAHEAD_BYTES);
  const err = new BoundedCapture(
    cap + OUTPUT_LOOKAHEAD_BYTES,
    spec.record === null ? 0 : RECORD_TAIL_BYTES,
  );
  const live = request.live;
  const captures = { stdout: out, stderr: err };
  const sinks: CallSinks = {
    output(stream, bytes) {
      captures[stream].push(bytes);
      live?.push(stream, bytes);
    },
  };
  let child: ServedCall;
  let sandboxRequest: Uint8Array | null = null;
  try {
    if (sandbox !== null) {
      // Encoded before a sandbox is taken: a call that cannot be said is
      // refused with nothing started.
      sandboxRequest = encodeSandboxRequest(sandbox.cwd, sandbox.env, sandbox.args, sandbox.stdin);
      child = settings.ahead.take(spec.launch, sinks);
    } else {
      child = settings.helper.start(
        spec.launch.cwd,
        spec.launch.env,
        rest,
        spec.stdin === null && spec.go === undefined ? "null" : "piped",
        sinks,
      );
    }
  } catch (error) {
    return refuse(...spawnFailure(error, name, head));
  }
  // Settles true once the command may start (at once without a go).
  const goAhead = spec.go === undefined ? Promise.resolve(true) : spec.go.catch(() => false);
  if (sandbox !== null && sandboxRequest !== null) {
    const requestBytes = sandboxRequest;
    const { backstopMs } = sandbox;
    // bwrap mode: the request is the sandbox's go. Nothing the call chose
    // reaches the sandbox before the attempt record is durable; the
    // backstop starts first, so no command of it runs without one. No go
    // closes its stdin unwritten: it ends having run nothing.
    goAhead.then((go) => {
      if (!go) return;
      child.startBackstop(backstopMs);
      child.write(requestBytes);
      if (spec.stdin !== null) child.write(spec.stdin);
    }).finally(() => child.closeInput());
  } else if (spec.stdin !== null || spec.go !== undefined) {
    // A plan: the helper reads all of it before anything starts. One
    // command's stdin text: a command that exits without reading it drops
    // the rest, which is not an error of the call. With a go, nothing is
    // written until it comes: the helper has set up the containment and
    // waits; no go closes its stdin unwritten and it ends having run nothing.
    const plan = spec.commandPath === null;
    goAhead.then((go) => {
      if (!go) return;
      if (plan || spec.go === undefined) child.write(spec.stdin ?? new Uint8Array());
      else child.write(spec.stdin === null ? GO_BYTE : withGoByte(spec.stdin));
    }).finally(() => child.closeInput());
  }
  const timeoutMs = request.timeoutMs ?? policy.limits.timeoutMs;

  let stopReason: StopReason | null = null;
  let exited = false;
  let resend: Timer | undefined;
  let lastResort: Timer | undefined;
  const stop = (reason: StopReason) => {
    if (stopReason !== null || exited) return;
    stopReason = reason;
    const ask = () => child.kill("SIGALRM");
    ask();
    // The helper SIGKILLs the call's init at the first request, so one is
    // enough; repeating it is harmless (a reaped call's is dropped).
    resend = every(RESEND_INTERVAL_MS, ask);
    lastResort = after(settings.killGraceMs, () => child.kill("SIGKILL"));
  };
  const untrack = track({ stop });
  const timer = after(timeoutMs, () => stop("timeout"));
  const onAbort = () => stop("cancelled");
  request.signal?.addEventListener("abort", onAbort, { once: true });
  // An abort that landed while we were spawning fired no event: honour it now.
  if (request.signal?.aborted) stop("cancelled");

  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    exited = true;
    timer.cancel();
    resend?.cancel();
    lastResort?.cancel();
    request.signal?.removeEventListener("abort", onAbort);
    untrack();
  }
  // The init's reaping means the namespace is empty, so the pipes reach EOF
  // at once. Should a pipe stay open anyway (only when the serving helper
  // died, and the tree dies asynchronously), stop reading rather than hang.
  let pipesHeld = false;
  const readGuard = after(settings.killGraceMs, () => {
    pipesHeld = true;
    child.drop();
  });
  await child.drained;
  readGuard.cancel();
  const durationMs = elapsed();
  if (!(await goAhead)) {
    // The helper ended at the missing go: no program of the call ran.
    return refuse("CANCELLED", `The call was stopped before "${name}" started.`);
  }
  if (child.helperLost && stopReason === null) {
    // Not the command's end: the serving helper died (killed from outside,
    // or by a fault), and the call's tree with it. Whatever it printed is
    // not an answer to trust; the next call starts a new helper.
    return refuse(
      "EXECUTOR_ERROR",
      `Cannot run "${name}": the launcher helper ended during the call, and its process tree with it.`,
    );
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
    if (verdict.kind === "setup_failed" && CHDIR_FAILED.test(verdict.detail)) {
      // The helper's chdir of the call's working folder failed: it is gone.
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

function spawnFailure(error: unknown, name: string, launcher: string): [ExecOutcomeCode, string] {
  if (error instanceof Deno.errors.NotCapable) {
    return [
      "RUNTIME_DENIED",
      `Deno's permissions refused to start the launcher for "${name}" (${launcher}).`,
    ];
  }
  if (error instanceof UnencodableRequest) {
    return ["EXECUTOR_ERROR", `Cannot run "${name}": ${error.message}.`];
  }
  if (error instanceof Deno.errors.NotFound) {
    return [
      "CONTAINMENT_UNAVAILABLE",
      `"${name}" was not started: the launcher ${launcher} is missing.`,
    ];
  }
  const message = error instanceof Error ? error.message : String(error);
  return ["EXECUTOR_ERROR", `Cannot run "${name}": the launcher failed to start (${message}).`];
}

/** The call's process found its working folder gone (its `chdir` failed). */
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
