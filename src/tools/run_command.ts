/**
 * `run_command`: the one tool that executes. The order of steps is the
 * security argument and is tested as such:
 *
 *   snapshot -> scope -> concurrency slot -> parse + policy + path model ->
 *   cwd jail -> argument jail -> audit attempt (fsync; fail closed) -> exec ->
 *   (redact, then cap: inside exec) -> audit outcome -> envelope
 *
 * Nothing runs unless every step before exec said yes, and the attempt record
 * is on disk before the child exists.
 *
 * @module
 */
import type { CommandResult } from "../result/codes.ts";
import type { ServerContext } from "../server/context.ts";
import { type CallerIdentity, hasScope } from "./caller.ts";
import { checkCommandInput } from "./check_command.ts";
import { makeResult } from "./envelope.ts";
import { snapshotCommandInput } from "./snapshot.ts";
import type { AuditStdin } from "../audit/mod.ts";
import { sessionNotFound, sessionOwner, type SessionRecord, sessionsFor } from "../session/mod.ts";
import { cwdInSession, jailRelative, leadsWithCd } from "./session_cwd.ts";
import { internalError } from "./internal_error.ts";
import { withSandboxNotice } from "./sandbox_notice.ts";
import { auditPlan, planEnvironment, stageResults, toCommandPlan } from "./plan_request.ts";
import type { ExecOutcome, StageStatus } from "../exec/mod.ts";

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
): Promise<CommandResult> {
  const startedAt = performance.now();
  const callId = crypto.randomUUID();
  return context.track(
    runChecked(context, caller, rawInput, signal, startedAt, callId).catch((error) =>
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

  // The slot is taken before the path checks: they do filesystem lookups on
  // the model's input, so they count against the same concurrency cap as
  // the commands themselves (their own budget bounds each one).
  const slot = context.limiter.tryAcquire(
    caller.clientId,
    policy.http.maxConcurrentPerClient,
  );
  if (!slot.ok) {
    await audit.writeAttempt({
      ...base,
      command_raw: command,
      argv: null,
      cwd: requestedCwd ?? null,
      verdict: "deny",
      code: "BUSY",
      reason: slot.reason,
    });
    return makeResult("BUSY", { policyReason: slot.reason, startedAt });
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
        });
        return makeResult("POLICY_DENIED", { policyReason: reason, startedAt });
      }
    }
    const checked = await checkCommandInput(
      policy,
      session === null ? input : { ...input, cwd: cwdInSession(session.cwd, requestedCwd) },
    );
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
      });
      return makeResult(checked.code, { policyReason: checked.reason, startedAt });
    }
    // The audit records the argv that runs: the command word and the run
    // specification's arguments, the policy's safety options included.
    const attempt = await audit.writeAttempt({
      ...base,
      command_raw: command,
      argv: [checked.argv[0] as string, ...checked.run.args],
      cwd: checked.cwd,
      verdict: "allow",
      code: null,
      reason: checked.reason,
      ...(checked.plan === null ? {} : { plan: auditPlan(checked.plan) }),
      ...stdinRecord,
    });
    if (!attempt.ok && audit.failMode === "closed") {
      // Fail closed: a command the log cannot record must not run.
      return makeResult("AUDIT_UNAVAILABLE", {
        policyReason:
          `The audit log could not record this call (${attempt.reason}), so it did not run.`,
        startedAt,
      });
    }
    const common = {
      callId,
      cwd: checked.cwd,
      redact: context.redactor.redact,
      // With the whole redactor the cap is placed around each secret exactly.
      redactor: context.redactor,
      ...(signal === undefined ? {} : { signal }),
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
  } finally {
    slot.release();
  }
}

async function digestStdin(bytes: Uint8Array<ArrayBuffer>): Promise<AuditStdin> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return {
    bytes: bytes.length,
    sha256: Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join(""),
  };
}
