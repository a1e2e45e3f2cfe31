/**
 * `run_command`: the one tool that executes. The order of steps is the
 * security argument and is tested as such:
 *
 *   snapshot -> scope -> concurrency slot (may wait in the fair queue; no
 *   record while it waits) -> parse + policy + path model ->
 *   cwd jail -> argument jail -> audit attempt (fsync; fail closed) -> exec ->
 *   (redact, then cap: inside exec) -> audit outcome -> envelope
 *
 * Nothing runs unless every step before exec said yes, and the attempt record
 * is on disk before the command exists: the launcher is spawned while the
 * record's fdatasync is under way (the two overlap), but it executes the
 * command only on the go the server gives once the record is durable, and
 * never without it (`ExecRequest.go`).
 *
 * @module
 */
import type { CommandResult } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import { type CallerIdentity, hasScope } from "./caller.ts";
import { checkCommandInput, type CheckResult } from "./check_command.ts";
import { makeResult } from "./envelope.ts";
import { snapshotCommandInput } from "./snapshot.ts";
import type { AuditStdin } from "../audit/mod.ts";
import { sessionNotFound, sessionOwner, type SessionRecord, sessionsFor } from "../session/mod.ts";
import { cwdInSession, jailRelative, leadsWithCd } from "./session_cwd.ts";
import { internalError } from "./internal_error.ts";
import { withSandboxNotice } from "./sandbox_notice.ts";
import { auditPlan, planEnvironment, stageResults, toCommandPlan } from "./plan_request.ts";
import type { ExecOutcome, StageStatus } from "../exec/mod.ts";
import { headAndTail, jobsFor, LiveOutput, newJobId } from "../jobs/mod.ts";
import type { CommandInput } from "./snapshot.ts";
import type { Sessions } from "../session/mod.ts";
import { after, every, type Timer } from "../timers/mod.ts";
import { type Elicit, holdForApproval } from "./approval_gate.ts";
import type { ClientRoundTrip } from "./approval_round_trip.ts";
import { deferUntilApproved } from "./approval_job.ts";

export const RUN_COMMAND_DESCRIPTION =
  "Run allowlisted commands inside the jail directory, without a shell: htmcp " +
  "parses the text itself (POSIX quoting) and runs pipes (a | b), sequences " +
  "(&&, ||, ;), redirections to files in the jail (> f, >> f, < f, 2>&1), a " +
  "leading cd DIR && ..., and globs (*.ts) expanded inside the jail. $ is plain " +
  "text only inside single quotes; variables, $(...), backticks, & and subshells " +
  "are refused. Or pass argv (one command as a list of words, taken exactly, no " +
  "parsing) instead of command; stdin gives text to one plain command; session_id " +
  "runs in a session from session_start. Call describe_policy first to see which " +
  "commands and arguments are allowed, and explain_command to test a command " +
  "without running it.";

/** What the transport lets a call report while it runs. */
export interface RunHooks {
  /**
   * Called at least every `limits.progress_interval_ms` while the reply
   * waits, with a redacted, bounded message (elapsed time, byte counts, the
   * last lines of each stream). Absent: no progress (no progressToken).
   */
  readonly progress?: (message: string, elapsedMs: number) => void;
  /**
   * Asks the human in the client (MCP form elicitation); present only when
   * the client declared it. Used for commands a prompt rule holds.
   */
  readonly elicit?: Elicit;
  /**
   * The 2026-07-28 client's question channel (an `input_required` result
   * and the retried call's answer); present only when the request declared
   * form elicitation.
   */
  readonly roundTrip?: ClientRoundTrip;
}

/**
 * Runs the tool without MCP around it (the MCP handler and tests call this).
 *
 * @param context The server context.
 * @param caller Who is calling.
 * @param rawInput The untrusted arguments; read once.
 * @param signal Aborted when the client cancels the call.
 */
export function runCommandTool(
  context: ServerContext,
  caller: CallerIdentity,
  rawInput: unknown,
  signal?: AbortSignal,
  hooks: RunHooks = {},
): Promise<CommandResult> {
  const startedAt = performance.now();
  const callId = crypto.randomUUID();
  return context.track(
    runChecked(context, caller, rawInput, signal, startedAt, callId, hooks).catch((error) =>
      internalError(context, { callId, tool: "run_command", caller, startedAt, error })
    ).then((result) => withSandboxNotice(context, result)),
  );
}

async function runChecked(
  context: ServerContext,
  caller: CallerIdentity,
  rawInput: unknown,
  signal: AbortSignal | undefined,
  startedAt: number,
  callId: string,
  hooks: RunHooks,
): Promise<CommandResult> {
  const { policy, audit } = context;
  const base = {
    call_id: callId,
    tool: "run_command",
    client_id: caller.clientId,
    // A caller that names no era came through a 2025 handshake.
    protocol_era: caller.protocolEra ?? "2025",
  };

  const snap = snapshotCommandInput(rawInput);
  if (!snap.ok) {
    await audit.writeAttempt({
      ...base,
      command_raw: "",
      argv: null,
      cwd: null,
      verdict: "deny",
      code: "POLICY_DENIED",
      reason: snap.reason,
    });
    return makeResult("POLICY_DENIED", { policyReason: snap.reason, startedAt });
  }
  const input = snap.input;
  const { commandRaw: command, cwd: requestedCwd } = input;
  // Length and digest only: the text itself may be data the log must not keep.
  const stdinRecord = input.stdin === undefined ? {} : { stdin: await digestStdin(input.stdin) };

  if (!hasScope(caller, "shell:execute")) {
    const reason = 'This token lacks the "shell:execute" scope that run_command needs.';
    await audit.writeAttempt({
      ...base,
      command_raw: command,
      argv: null,
      cwd: null,
      verdict: "deny",
      code: "SCOPE_DENIED",
      reason,
    });
    return makeResult("SCOPE_DENIED", { policyReason: reason, startedAt });
  }

  const jobRefusal = jobInputRefusal(policy, input);
  if (jobRefusal !== null) {
    await audit.writeAttempt({
      ...base,
      command_raw: command,
      argv: null,
      cwd: requestedCwd ?? null,
      verdict: "deny",
      code: "POLICY_DENIED",
      reason: jobRefusal,
    });
    return makeResult("POLICY_DENIED", { policyReason: jobRefusal, startedAt });
  }

  // The slot is taken before the path checks: they do filesystem lookups on
  // the model's input, so they count against the same concurrency cap as
  // the commands themselves (their own budget bounds each one). A call
  // beyond a cap waits in the fair queue; nothing is judged or recorded
  // while it waits, and a call that never starts records its refusal (BUSY
  // after the wait bound, CANCELLED when the client gave up), with how long
  // it waited. A call that becomes a job hands its slot to the job.
  let slotHandedOver = false;
  const slot = await context.limiter.acquire(
    caller.clientId,
    policy.http.maxConcurrentPerClient,
    signal,
  );
  const queued = slot.queuedMs > 0 ? { queued_ms: slot.queuedMs } : {};
  if (!slot.ok) {
    await audit.writeAttempt({
      ...base,
      command_raw: command,
      argv: null,
      cwd: requestedCwd ?? null,
      verdict: "deny",
      code: slot.code,
      reason: slot.reason,
      ...queued,
      ...stdinRecord,
    });
    return makeResult(slot.code, { policyReason: slot.reason, startedAt });
  }
  try {
    const owner = sessionOwner(caller.clientId);
    const sessions = input.sessionId === undefined ? null : sessionsFor(policy);
    let session: SessionRecord | null = null;
    if (input.sessionId !== undefined) {
      session = sessions === null ? null : await sessions.use(owner, input.sessionId);
      if (session === null) {
        const reason = sessions === null
          ? "Sessions need a state_dir in the policy, and this server has none."
          : sessionNotFound(input.sessionId);
        await audit.writeAttempt({
          ...base,
          command_raw: command,
          argv: null,
          cwd: requestedCwd ?? null,
          verdict: "deny",
          code: "POLICY_DENIED",
          reason,
          ...stdinRecord,
          ...queued,
        });
        return makeResult("POLICY_DENIED", { policyReason: reason, startedAt });
      }
    }
    const judged = session === null
      ? input
      : { ...input, cwd: cwdInSession(session.cwd, requestedCwd) };
    const checked = await checkCommandInput(policy, judged, context.executor.listFolder);
    if (!checked.ok && session !== null && sessions !== null && checked.cdTarget !== undefined) {
      // `cd DIR` alone in a session: every cd was judged and confined; the
      // session keeps the folder, as a shell would. Audited like a command.
      const cwd = jailRelative(policy.jailRoot, checked.cdTarget);
      const reason = `The session's working directory is now "${cwd}".`;
      const attempt = await audit.writeAttempt({
        ...base,
        command_raw: command,
        argv: null,
        cwd: checked.cdTarget,
        verdict: "allow",
        code: null,
        reason,
        ...queued,
      });
      if (!attempt.ok && audit.failMode === "closed") {
        return makeResult("AUDIT_UNAVAILABLE", {
          policyReason: `The audit log could not record this call (${attempt.reason}), so the ` +
            "session's working directory did not change.",
          startedAt,
        });
      }
      const moved = await sessions.setCwd(owner, session.id, cwd);
      const code = moved ? "OK" : "POLICY_DENIED";
      const result = makeResult(code, {
        policyReason: moved ? reason : sessionNotFound(session.id),
        startedAt,
        ...(moved ? { exitCode: 0 } : {}),
      });
      await audit.writeOutcome({
        ...base,
        code,
        exit_code: moved ? 0 : null,
        duration_ms: result.duration_ms,
        stdout_bytes: 0,
        stderr_bytes: 0,
        truncated: false,
      });
      return result;
    }
    if (!checked.ok) {
      // Refusals are audited too: an operator must see what the model tried.
      await audit.writeAttempt({
        ...base,
        command_raw: command,
        argv: checked.argv,
        cwd: checked.cwd ?? requestedCwd ?? null,
        verdict: "deny",
        code: checked.code,
        reason: checked.reason,
        ...queued,
      });
      return makeResult(checked.code, { policyReason: checked.reason, startedAt });
    }
    const limits = policy.limits;
    // The command's deadline: asked for (bounded above), else timeout_ms for
    // a foreground call and max_timeout_ms for a background one. How long
    // the reply waits is a different clock (foreground_ms, below).
    const timeoutMs = input.timeoutMs ??
      (input.background ? limits.maxTimeoutMs : limits.timeoutMs);
    // A prompt rule holds a command every refusing check allowed: it waits
    // for a human here, before its attempt record, so nothing runs unanswered.
    let approvalRecord: { approval_id?: string } = {};
    if (checked.prompts.length > 0) {
      let gate = await holdForApproval(
        context,
        caller,
        {
          callId,
          commandRaw: command,
          checked,
          stdin: stdinRecord.stdin ?? null,
          ...(input.stdin === undefined ? {} : { stdinBytes: input.stdin }),
        },
        hooks.elicit,
        signal,
        hooks.roundTrip,
      );
      if (!gate.ok && gate.pending !== undefined) {
        // Unanswered within wait_ms: the call becomes a job that starts the
        // judged run when the operator allows it (approval_job.ts).
        const deferred = await deferUntilApproved(context, {
          caller,
          base,
          command,
          judged,
          checked,
          stdin: stdinRecord.stdin,
          timeoutMs,
          approval: gate.pending.record,
          binding: gate.pending.binding,
          execute: (approved, runSignal, live, runStartedAt) =>
            executeChecked(context, {
              base,
              callId,
              input,
              checked: approved,
              session,
              sessions,
              owner,
              startedAt: runStartedAt,
              timeoutMs,
              signal: runSignal,
              live,
            }),
        }, startedAt);
        if (deferred.ok) return deferred.result;
        gate = deferred;
      }
      if (!gate.ok) {
        await audit.writeAttempt({
          ...base,
          command_raw: command,
          argv: [checked.argv[0] as string, ...checked.run.args],
          cwd: checked.cwd,
          verdict: "deny",
          code: gate.code,
          reason: gate.reason,
          ...(gate.approvalId === null ? {} : { approval_id: gate.approvalId }),
          ...stdinRecord,
          ...queued,
        });
        return makeResult(gate.code, {
          policyReason: gate.reason,
          startedAt,
          ...(gate.jobId === undefined ? {} : { jobId: gate.jobId }),
          ...(gate.approvalId === null ? {} : { approvalId: gate.approvalId }),
        });
      }
      approvalRecord = { approval_id: gate.approvalId };
    }
    // The audit records the argv that runs: the command word and the run
    // specification's arguments, the policy's safety options included.
    const attemptWritten = audit.writeAttempt({
      ...base,
      command_raw: command,
      argv: [checked.argv[0] as string, ...checked.run.args],
      cwd: checked.cwd,
      verdict: "allow",
      code: null,
      reason: checked.reason,
      ...(checked.plan === null ? {} : { plan: auditPlan(checked.plan) }),
      ...approvalRecord,
      ...stdinRecord,
      ...queued,
    });
    // Fail closed: a command the log cannot record must not run, so the
    // command's go waits for the record and is refused when it failed. The
    // one verdict both the go and the reply below read.
    const recorded: Promise<{ mayRun: true } | { mayRun: false; reason: string }> = attemptWritten
      .then(
        (written) =>
          written.ok || audit.failMode !== "closed"
            ? { mayRun: true }
            : { mayRun: false, reason: written.reason },
        (error) => ({ mayRun: false, reason: String(error) }),
      );
    const go = recorded.then((verdict) => verdict.mayRun);
    const jobs = jobsFor(context);
    // The run's own controller: a foreground call links the client's
    // cancellation to it; once the run is a job, only job_cancel, a cancel
    // request in its record and shutdown reach it.
    const controller = new AbortController();
    const live = new LiveOutput();
    const onClientAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) controller.abort(signal.reason);
    signal?.addEventListener("abort", onClientAbort, { once: true });
    const detachClient = () => signal?.removeEventListener("abort", onClientAbort);
    const finished = executeChecked(context, {
      base,
      callId,
      input,
      checked,
      session,
      sessions,
      owner,
      startedAt,
      timeoutMs,
      signal: controller.signal,
      live,
      go,
    });
    const verdict = await recorded;
    if (!verdict.mayRun) {
      detachClient();
      // The launcher ends at the missing go, having run nothing.
      await finished;
      return makeResult("AUDIT_UNAVAILABLE", {
        policyReason:
          `The audit log could not record this call (${verdict.reason}), so it did not run.`,
        startedAt,
      });
    }
    const progress = hooks.progress === undefined
      ? undefined
      : (elapsedMs: number) =>
        hooks.progress?.(live.message(elapsedMs, context.redactor), elapsedMs);
    if (jobs === null) {
      try {
        const result = await waitWithProgress(finished, null, limits.progressIntervalMs, progress);
        return inlineResult(result as CommandResult, limits.inlineOutputBytes, null);
      } finally {
        detachClient();
      }
    }
    const jobId = newJobId();
    slotHandedOver = true;
    const job = jobs.adopt({
      id: jobId,
      owner,
      clientId: caller.clientId,
      callId,
      command,
      argv: [checked.argv[0] as string, ...checked.run.args],
      cwd: jailRelative(policy.jailRoot, checked.cwd),
      timeoutMs,
      startedMs: Date.now(),
      controller,
      live,
      result: finished,
      release: slot.release,
    });
    // A job nobody can see or cancel must not run on: no record, no job.
    const persistOrAbort = async (origin: "background" | "adaptive") => {
      try {
        await job.persist(origin);
      } catch (error) {
        controller.abort(new Error("job record failed"));
        throw error;
      }
    };
    const followIt = `Call job_status with job_id "${jobId}" and wait_ms to wait for it, ` +
      "job_output to read its output, job_cancel to stop it.";
    if (input.background) {
      detachClient();
      await persistOrAbort("background");
      return makeResult("JOB_RUNNING", {
        policyReason: `Started as job ${jobId} (deadline ${timeoutMs} ms). ${followIt}`,
        startedAt,
        jobId,
      });
    }
    let first: { result: CommandResult; kept: boolean } | "still_running";
    try {
      first = await waitWithProgress(
        job.done,
        limits.foregroundMs,
        limits.progressIntervalMs,
        progress,
      );
    } finally {
      detachClient();
    }
    if (first === "still_running") {
      await persistOrAbort("adaptive");
      return makeResult("JOB_RUNNING", {
        policyReason: `The command was still running after ${limits.foregroundMs} ms, so it ` +
          `continues as job ${jobId} (deadline ${timeoutMs} ms) instead of being killed. ` +
          followIt,
        startedAt,
        jobId,
      });
    }
    return inlineResult(first.result, limits.inlineOutputBytes, first.kept ? jobId : null);
  } finally {
    // A run handed to the job manager frees its slot when it ends.
    if (!slotHandedOver) slot.release();
  }
}

interface Execution {
  readonly base: { call_id: string; tool: string; client_id: string | null };
  readonly callId: string;
  readonly input: CommandInput;
  readonly checked: Extract<CheckResult, { ok: true }>;
  readonly session: SessionRecord | null;
  readonly sessions: Sessions | null;
  readonly owner: string;
  readonly startedAt: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly live: LiveOutput;
  /** The command's start signal (`ExecRequest.go`); absent when its attempt is already durable. */
  readonly go?: Promise<boolean>;
}

/**
 * Runs an allowed, audited command to its end and writes its outcome record:
 * exec (redaction and the cap inside), the session's cd, the envelope.
 */
async function executeChecked(context: ServerContext, run: Execution): Promise<CommandResult> {
  const { policy, audit } = context;
  const { base, checked, input, session, sessions, owner, startedAt } = run;
  const common = {
    callId: run.callId,
    cwd: checked.cwd,
    redactor: context.redactor,
    signal: run.signal,
    timeoutMs: run.timeoutMs,
    live: run.live,
    ...(run.go === undefined ? {} : { go: run.go }),
  };
  const plan = checked.plan;
  let outcome: ExecOutcome;
  let stageStatuses: readonly StageStatus[] | undefined;
  if (plan === null) {
    outcome = await context.executor.run({
      ...common,
      command: checked.command,
      args: checked.run.args,
      env: checked.run.env,
      ...(input.stdin === undefined ? {} : { stdin: input.stdin }),
    });
  } else {
    const ran = await context.executor.runPlan({
      ...common,
      cwd: plan.cwd,
      // Stages share one environment: every stage's run specification
      // (git's safety variables) applies to the whole plan.
      env: planEnvironment(plan),
      name: checked.argv[0] ?? checked.command.name,
      plan: toCommandPlan(plan),
    });
    outcome = ran;
    stageStatuses = ran.stages;
  }
  if (run.go !== undefined && !(await run.go)) {
    // Never started (its attempt was not recorded): no outcome, no cd.
    return makeResult("AUDIT_UNAVAILABLE", { policyReason: outcome.reason, startedAt });
  }
  if (session !== null && sessions !== null && plan !== null && leadsWithCd(input.command)) {
    // `cd DIR && ...` in a session moves it, as a shell's cd would, whatever
    // the later commands did: the cd itself was judged and confined.
    await sessions.setCwd(owner, session.id, jailRelative(policy.jailRoot, plan.cwd));
  }
  const reason = outcome.code === "OK" ? checked.reason : outcome.reason;
  const result = makeResult(outcome.code, {
    policyReason: reason,
    startedAt,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    exitCode: outcome.exitCode,
    ...(plan === null ? {} : { stages: stageResults(plan, stageStatuses ?? []) }),
  });
  await audit.writeOutcome({
    ...base,
    ...(stageStatuses === undefined ? {} : { stages: stageStatuses }),
    code: outcome.code,
    exit_code: outcome.exitCode,
    duration_ms: result.duration_ms,
    stdout_bytes: outcome.stdoutBytes,
    stderr_bytes: outcome.stderrBytes,
    truncated: outcome.truncated,
  });
  return result;
}

/**
 * Waits for `done`, calling `progress` every `intervalMs`; after `limitMs`
 * (null: never) gives up waiting (the run goes on) with "still_running".
 */
async function waitWithProgress<T>(
  done: Promise<T>,
  limitMs: number | null,
  intervalMs: number,
  progress: ((elapsedMs: number) => void) | undefined,
): Promise<T | "still_running"> {
  const started = performance.now();
  const ticker = progress === undefined ? undefined : every(intervalMs, () => {
    try {
      progress(performance.now() - started);
    } catch {
      // A notification the transport cannot send is not the command's failure.
    }
  });
  let timer: Timer | undefined;
  const giveUp = limitMs === null ? null : new Promise<"still_running">((resolve) => {
    timer = after(limitMs, () => resolve("still_running"));
  });
  try {
    return await (giveUp === null ? done : Promise.race([done, giveUp]));
  } finally {
    ticker?.cancel();
    timer?.cancel();
  }
}

/**
 * The reply's form of a result: each stream's head and tail within
 * `limitBytes`, the middle replaced by a marker naming the job that holds
 * the whole redacted output (or saying it is not kept).
 */
function inlineResult(
  result: CommandResult,
  limitBytes: number,
  jobId: string | null,
): CommandResult {
  const hint = (stream: "stdout" | "stderr") => (offset: number, length: number) =>
    jobId === null
      ? "the full output is not kept (this server has no state_dir)"
      : `read them with job_output(job_id="${jobId}", stream="${stream}", offset=${offset}, limit=${length})`;
  const stdout = headAndTail(result.stdout, limitBytes, hint("stdout"));
  const stderr = headAndTail(result.stderr, limitBytes, hint("stderr"));
  return Object.freeze({
    ...result,
    stdout: stdout.text,
    stderr: stderr.text,
    ...(jobId === null ? {} : { job_id: jobId }),
  });
}

/** Why `background`/`timeout_ms` cannot be honoured, or null. */
function jobInputRefusal(policy: ServerContext["policy"], input: CommandInput): string | null {
  const max = policy.limits.maxTimeoutMs;
  if (input.timeoutMs !== undefined && input.timeoutMs > max) {
    return `The timeout_ms ${input.timeoutMs} is above this server's limit of ${max} ms (limits.max_timeout_ms).`;
  }
  if (input.background && policy.stateDir === null && policy.state?.backend !== "postgres") {
    // Jobs are durable or absent: without a state store nobody could see,
    // page or cancel the job once this call returned.
    return "Background jobs need a state_dir (or [state] backend) in the policy, and this server has none.";
  }
  return null;
}

async function digestStdin(bytes: Uint8Array<ArrayBuffer>): Promise<AuditStdin> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return {
    bytes: bytes.length,
    sha256: Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join(""),
  };
}
