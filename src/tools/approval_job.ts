/**
 * A prompted call that outlived `approval.wait_ms` becomes a job that waits
 * for its approval (state `awaiting_approval`) and starts, once, when the
 * operator allows it. Nothing runs before that; denial, expiry, `job_cancel`
 * and the server's stop end the job with nothing run.
 *
 * Threats and answers:
 * - Running something other than what was approved: at the start the
 *   command is judged again, completely, under the running policy, and its
 *   run digest must equal the approval's; the policy hash must be the
 *   approval's; `consume` checks owner, digest and policy hash again in the
 *   one atomic `allowed -> used` step.
 * - Running twice: only the job attached to the approval (`attachJob`, once)
 *   starts it, and `consume` lets it be used once.
 * - A job nobody watches: the server holding it beats as for running jobs;
 *   with that server gone the sweep turns the job `lost` (nothing ran).
 * - Running after a cancel, or into a stopping server: the withdrawal is
 *   checked after every await on the way to the start, and the slot comes
 *   from the limiter, which refuses once the server stops.
 *
 * @module
 */
import type { CommandResult, ResultCode } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import type { AttemptFields, AuditStdin } from "../audit/mod.ts";
import type { CallerIdentity } from "./caller.ts";
import type { CheckResult } from "./check_result.ts";
import type { CommandInput } from "./snapshot.ts";
import { checkCommandInput } from "./check_command.ts";
import { makeResult } from "./envelope.ts";
import { auditPlan } from "./plan_request.ts";
import { jailRelative } from "./session_cwd.ts";
import { approvalBinding, type GateRefusal, pendingSentence } from "./approval_gate.ts";
import {
  type ApprovalBinding,
  type ApprovalRecord,
  ApprovalStore,
  type Transition,
} from "../approvals/mod.ts";
import { type JobManager, jobsFor, LiveOutput, newJobId } from "../jobs/mod.ts";
import { sleep } from "../timers/mod.ts";
import { stateStoreFor } from "../state/mod.ts";
import { redactArgv } from "../redact/mod.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** A prompted call outlived `approval.wait_ms` and now waits as a job; nothing runs yet. */
    job_awaiting_approval: {
      readonly job_id: string;
      readonly call_id: string;
      readonly client_id: string | null;
      readonly approval_id: string;
      readonly expires_ms: number;
    };
  }
}

type Checked = Extract<CheckResult, { ok: true }>;

/** Everything the job needs to start the judged run later, in this process. */
export interface Deferral {
  readonly caller: CallerIdentity;
  /** The attempt fields every record of this call shares (call id, tool, client, era). */
  readonly base: Pick<AttemptFields, "call_id" | "tool" | "client_id" | "protocol_era">;
  readonly command: string;
  /** The input exactly as it was judged (a session's folder applied). */
  readonly judged: CommandInput;
  readonly checked: Checked;
  readonly stdin: AuditStdin | undefined;
  readonly timeoutMs: number;
  readonly approval: ApprovalRecord;
  readonly binding: ApprovalBinding;
  /** Runs an allowed, audited command to its end (exec, redaction, cap, outcome record). */
  readonly execute: (
    checked: Checked,
    signal: AbortSignal,
    live: LiveOutput,
    startedAt: number,
  ) => Promise<CommandResult>;
}

/** The call's reply (`APPROVAL_PENDING` with the job), or the gate's refusal when no job was made. */
export type Deferred = { readonly ok: true; readonly result: CommandResult } | GateRefusal;

/** How often the holding server reads the approval record. */
const POLL_MS = 250;

/**
 * Makes the call a job waiting for `deferral.approval`, and starts watching it.
 *
 * @returns The reply for the call, or a refusal when the approval already
 *   has another call's job or stopped being open.
 */
export async function deferUntilApproved(
  context: ServerContext,
  deferral: Deferral,
  startedAt: number,
): Promise<Deferred> {
  const jobs = jobsFor(context);
  const state = stateStoreFor(context.policy);
  const approvalId = deferral.approval.id;
  if (jobs === null || state === null) {
    // Out-of-band approvals exist only with a state store, and so do jobs;
    // this is the second check should that ever change.
    return refusal("APPROVAL_PENDING", approvalId, pendingSentence(approvalId));
  }
  const approvals = new ApprovalStore(state);
  const jobId = newJobId();
  const attached = await approvals.attachJob(approvalId, jobId, deferral.binding);
  if (!attached.ok) {
    const answered = attached.record;
    if (answered?.state === "denied" && answered.answer_audited !== true) {
      // Denied between the last poll and now: the answer is audited here.
      await context.audit.writeEvent("approval_answered", {
        approval_id: approvalId,
        call_id: deferral.base.call_id,
        answer: "deny",
        by: answered.answered_by ?? "unknown",
      });
      await approvals.markAnswerAudited(approvalId);
    }
    return attachRefusal(attached, approvalId);
  }
  const watch = new Watch(context, jobs, approvals, deferral, jobId);
  // Held before its record exists: a sweep in between must find it alive.
  jobs.hold(jobId, {
    owner: deferral.binding.owner,
    done: watch.done,
    cancel: () => watch.withdraw("cancel"),
  });
  try {
    await jobs.store.beat(jobs.writer);
    await jobs.store.put({
      id: jobId,
      owner: deferral.binding.owner,
      callId: deferral.base.call_id,
      command: context.redactor.redact(deferral.command),
      argv: redactArgv(context.redactor, argvOf(deferral.checked)),
      cwd: jailRelative(context.policy.jailRoot, deferral.checked.cwd),
      origin: "background",
      state: "awaiting_approval",
      code: null,
      exitCode: null,
      reason: `Waiting for approval ${approvalId}; nothing has run.`,
      startedMs: Date.now(),
      endedMs: null,
      timeoutMs: deferral.timeoutMs,
      stdoutBytes: 0,
      stderrBytes: 0,
      truncated: false,
      writer: jobs.writer,
      pid: Deno.pid,
      cancelRequestedMs: null,
      tail: "",
      approvalId,
    });
    await context.audit.writeEvent("job_awaiting_approval", {
      job_id: jobId,
      call_id: deferral.base.call_id,
      client_id: deferral.caller.clientId,
      approval_id: approvalId,
      expires_ms: deferral.approval.expires_ms,
    });
  } catch (error) {
    // A job nobody can see or cancel must not start later.
    watch.abandon();
    await approvals.retire(approvalId, "withdrawn").catch(() => {});
    throw error;
  }
  context.track(watch.run());
  return {
    ok: true,
    result: makeResult("APPROVAL_PENDING", {
      policyReason: `${pendingSentence(approvalId)} The call is now job ${jobId}: it starts ` +
        "(once) when the approval is allowed, and ends without running if it is denied, " +
        `expires or is cancelled. Call job_status with job_id "${jobId}" and wait_ms to ` +
        "follow it, job_cancel to withdraw it.",
      startedAt,
      jobId,
      approvalId,
    }),
  };
}

/** One awaiting job: polls its approval and either starts the run or ends the job unrun. */
class Watch {
  readonly done: Promise<void>;
  #resolve!: () => void;
  #withdrawn: "cancel" | null = null;
  #abandoned = false;
  /** Aborted by a withdrawal: a start waiting in the fair queue gives up. */
  readonly #withdrawal = new AbortController();

  constructor(
    readonly context: ServerContext,
    readonly jobs: JobManager,
    readonly approvals: ApprovalStore,
    readonly deferral: Deferral,
    readonly jobId: string,
  ) {
    this.done = new Promise((resolve) => this.#resolve = resolve);
  }

  withdraw(why: "cancel"): void {
    this.#withdrawn ??= why;
    this.#withdrawal.abort(new Error("withdrawn"));
  }

  /** The job could not be recorded: nothing watches it (nothing was audited as waiting). */
  abandon(): void {
    this.#abandoned = true;
    this.#resolve();
  }

  async run(): Promise<void> {
    try {
      if (!this.#abandoned) await this.#watch();
    } catch (error) {
      await this.context.audit.writeEvent("internal_error", {
        call_id: this.deferral.base.call_id,
        where: "awaiting job",
        message: error instanceof Error ? error.message : String(error),
      }).catch(() => {});
      await this.#endUnrun("INTERNAL_ERROR", "The job could not follow its approval; nothing ran.")
        .catch(() => {});
    } finally {
      this.#resolve();
    }
  }

  async #watch(): Promise<void> {
    const id = this.deferral.approval.id;
    for (;;) {
      const stop = this.#stopReason();
      if (stop !== null) {
        await this.approvals.retire(id, "withdrawn");
        return await this.#endUnrun("CANCELLED", stop);
      }
      let record = await this.approvals.get(id);
      if (record === null) {
        return await this.#endUnrun(
          "APPROVAL_DENIED",
          `Approval ${id} no longer exists; nothing ran.`,
        );
      }
      if (record.state === "pending" && Date.now() >= record.expires_ms) {
        await this.approvals.expire(id);
        record = { ...record, state: "expired" };
      }
      if (record.state === "allowed" || record.state === "denied") await this.#auditAnswer(record);
      switch (record.state) {
        case "allowed":
          return await this.#start(record);
        case "denied":
          return await this.#endUnrun(
            "APPROVAL_DENIED",
            `The operator (${record.answered_by ?? "unknown"}) denied approval ${id}; nothing ran.`,
          );
        case "expired":
          return await this.#expired();
        case "used":
        case "withdrawn":
          return await this.#endUnrun(
            "APPROVAL_DENIED",
            `Approval ${id} is ${record.state} and can start nothing more; nothing ran.`,
          );
        case "pending":
          await sleep(POLL_MS);
      }
    }
  }

  /** Why the job must end now without running, or null. */
  #stopReason(): string | null {
    const id = this.deferral.approval.id;
    if (this.#withdrawn === "cancel") {
      return `The job was cancelled while it waited for approval ${id}; it is withdrawn and nothing ran.`;
    }
    if (this.context.limiter.closed) {
      return `The server stopped while the job waited for approval ${id}; it is withdrawn and nothing ran.`;
    }
    return null;
  }

  async #auditAnswer(record: ApprovalRecord): Promise<void> {
    if (record.answer_audited === true) return;
    await this.context.audit.writeEvent("approval_answered", {
      approval_id: record.id,
      call_id: this.deferral.base.call_id,
      answer: record.state === "allowed" ? "allow" : "deny",
      by: record.answered_by ?? "unknown",
    });
    await this.approvals.markAnswerAudited(record.id);
  }

  async #expired(): Promise<void> {
    const id = this.deferral.approval.id;
    await this.context.audit.writeEvent("approval_expired", {
      approval_id: id,
      call_id: this.deferral.base.call_id,
    });
    await this.#endUnrun(
      "APPROVAL_EXPIRED",
      `Approval ${id} expired (approval.ttl_s) before it was answered or used; nothing ran.`,
    );
  }

  /** Allowed: judge again, bind, take a slot, use the approval once, audit, start. */
  async #start(record: ApprovalRecord): Promise<void> {
    const { context, deferral } = this;
    const id = record.id;
    // The server keeps the policy it froze at startup, so this holds unless
    // the approval was made under another policy; checked all the same, as
    // an approval binds the policy it was asked under.
    if (context.policyHash !== record.policy_hash) {
      await this.approvals.retire(id, "expired");
      return await this.#endUnrun(
        "APPROVAL_EXPIRED",
        `Approval ${id} was given under another policy than the one running; it no longer ` +
          "binds and nothing ran.",
      );
    }
    // Judged again, completely: what runs is what the policy allows now,
    // and it must be exactly what was approved.
    const checked = await checkCommandInput(
      context.policy,
      deferral.judged,
      context.executor.listFolder,
    );
    if (!checked.ok) {
      await this.approvals.retire(id, "expired");
      return await this.#endUnrun(checked.code, checked.reason);
    }
    const binding = await approvalBinding(context, deferral.caller, checked, deferral.stdin);
    if (binding.digest !== deferral.binding.digest || binding.owner !== record.owner) {
      await this.approvals.retire(id, "expired");
      return await this.#endUnrun(
        "APPROVAL_EXPIRED",
        `The command no longer resolves to what approval ${id} approved (a file or folder it ` +
          "names changed); nothing ran. Ask again.",
      );
    }
    const slot = await context.limiter.acquire(
      deferral.caller.clientId,
      context.policy.http.maxConcurrentPerClient,
      this.#withdrawal.signal,
    );
    if (!slot.ok) {
      const stop = this.#stopReason();
      if (stop !== null) await this.approvals.retire(id, "withdrawn");
      return await this.#endUnrun(
        stop === null ? slot.code : "CANCELLED",
        stop ?? `${slot.reason} Nothing ran.`,
      );
    }
    let released = false;
    const release = () => {
      if (!released) slot.release();
      released = true;
    };
    try {
      const used = await this.approvals.consume(id, binding);
      if (!used.ok) {
        if (used.state === "expired") return await this.#expired();
        return await this.#endUnrun(
          "APPROVAL_DENIED",
          `Approval ${id} could not be used (it is ${used.state}); nothing ran.`,
        );
      }
      const stop = this.#stopReason();
      if (stop !== null) return await this.#endUnrun("CANCELLED", stop);
      const attempt = await context.audit.writeAttempt({
        ...deferral.base,
        command_raw: deferral.command,
        argv: argvOf(checked),
        cwd: checked.cwd,
        verdict: "allow",
        code: null,
        reason: checked.reason,
        ...(checked.plan === null ? {} : { plan: auditPlan(checked.plan) }),
        approval_id: id,
        ...(deferral.stdin === undefined ? {} : { stdin: deferral.stdin }),
      });
      if (!attempt.ok && context.audit.failMode === "closed") {
        // Fail closed: a command the log cannot record must not run.
        return await this.#endUnrun(
          "AUDIT_UNAVAILABLE",
          `The audit log could not record this run (${attempt.reason}), so it did not run.`,
          false,
        );
      }
      const controller = new AbortController();
      const live = new LiveOutput();
      const startedAt = performance.now();
      const result = deferral.execute(checked, controller.signal, live, startedAt);
      released = true;
      const job = this.jobs.adopt({
        id: this.jobId,
        owner: deferral.binding.owner,
        clientId: deferral.caller.clientId,
        callId: deferral.base.call_id,
        command: deferral.command,
        argv: argvOf(checked),
        cwd: jailRelative(context.policy.jailRoot, checked.cwd),
        timeoutMs: deferral.timeoutMs,
        startedMs: Date.now(),
        controller,
        live,
        result,
        release: slot.release,
        approvalId: id,
      });
      try {
        await job.persist("background");
      } catch (error) {
        controller.abort(new Error("job record failed"));
        throw error;
      }
    } finally {
      release();
    }
  }

  /**
   * Ends the job without anything having run: the call's refusal record
   * (unless the attempt itself could not be written), the ended record and
   * `job_ended`.
   */
  async #endUnrun(code: ResultCode, reason: string, audited = true): Promise<void> {
    const { context, deferral } = this;
    if (audited) {
      await context.audit.writeAttempt({
        ...deferral.base,
        command_raw: deferral.command,
        argv: argvOf(deferral.checked),
        cwd: deferral.checked.cwd,
        verdict: "deny",
        code,
        reason,
        approval_id: deferral.approval.id,
        ...(deferral.stdin === undefined ? {} : { stdin: deferral.stdin }),
      });
    }
    await this.jobs.store.update(deferral.binding.owner, this.jobId, (r) => ({
      ...r,
      state: "ended",
      code,
      reason,
      endedMs: Date.now(),
    }));
    await context.audit.writeEvent("job_ended", {
      job_id: this.jobId,
      call_id: deferral.base.call_id,
      client_id: deferral.caller.clientId,
      result_code: code,
      exit_code: null,
      reason,
    });
  }
}

function argvOf(checked: Checked): string[] {
  return [checked.argv[0] as string, ...checked.run.args];
}

function refusal(code: ResultCode, approvalId: string, reason: string): GateRefusal {
  return { ok: false, code, reason, approvalId };
}

/** Why the approval could not take this call's job, as the call's answer. */
function attachRefusal(attached: Extract<Transition, { ok: false }>, id: string): GateRefusal {
  const jobId = attached.record?.job_id;
  if (jobId !== undefined) {
    return {
      ...refusal(
        "APPROVAL_PENDING",
        id,
        `This command already waits for approval ${id} as job ${jobId}; call job_status with ` +
          `job_id "${jobId}" and wait_ms to follow it.`,
      ),
      jobId,
    };
  }
  if (attached.state === "expired") {
    return refusal(
      "APPROVAL_EXPIRED",
      id,
      `Approval ${id} expired (approval.ttl_s) before it was answered or used; nothing ran.`,
    );
  }
  return refusal(
    "APPROVAL_DENIED",
    id,
    attached.state === "denied"
      ? `The operator denied approval ${id}; nothing ran.`
      : `Approval ${id} is ${attached.state}; nothing ran.`,
  );
}
