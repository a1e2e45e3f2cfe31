/**
 * The hold a `decision = "prompt"` rule puts on a command the policy
 * otherwise allowed: nothing runs until a human answers, and an answer
 * counts for exactly one run of exactly this command.
 *
 * Two ways to answer, in this order:
 *
 * - in the client, by MCP elicitation (form mode), when the client declared
 *   it and `[approval] require` is not `"operator"`: the answer is for this
 *   call alone and is never stored, so a second identical call asks again.
 *   A 2025 session asks with an elicitation request and waits; the
 *   2026-07-28 era asks with an `input_required` result and reads the
 *   answer from the retried call (`approval_round_trip.ts`): one question,
 *   two deliveries;
 * - out of band, otherwise: a pending record in the state store that the
 *   operator answers with `htmcp approvals allow|deny ID`; the call waits at
 *   most `approval.wait_ms` for it, then says `APPROVAL_PENDING` and hands
 *   the record to `approval_job.ts`, which makes the call a job that starts
 *   when the operator allows it. An identical call by the same caller while
 *   the record is open waits on it too (before it has a job) or is told the
 *   job's id (after).
 *
 * No MCP tool can answer: the store's `answer` is reached only by the CLI.
 *
 * @module
 */
import type { ResultCode } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import { visibleText } from "../encoding/mod.ts";
import type { CheckResult } from "./check_result.ts";
import type { CallerIdentity } from "./caller.ts";
import { sessionOwner } from "../session/mod.ts";
import { stateStoreFor } from "../state/mod.ts";
import { APPROVAL_DEFAULTS } from "../config/approval.ts";
import {
  type ApprovalBinding,
  type ApprovalRecord,
  ApprovalStore,
  findAlwaysRule,
  newApprovalId,
  runDigest,
} from "../approvals/mod.ts";
import { jailRelative } from "./session_cwd.ts";
import { redactArgv } from "../redact/mod.ts";
import { type ClientRoundTrip, holdOverRoundTrip } from "./approval_round_trip.ts";
import { after } from "../timers/mod.ts";
import { isLiveState, jobsFor } from "../jobs/mod.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** A prompt rule held a command; `via` says who may answer (`client` or `operator`). */
    approval_requested: {
      readonly approval_id: string;
      readonly call_id: string;
      readonly via: string;
      readonly argv: readonly string[];
      readonly cwd: string;
      readonly rule: string;
      readonly justification: string;
      readonly expires_ms: number;
      /** `"mrtr"` when asked through a 2026-07-28 `input_required` result. */
      readonly delivery?: string;
    };
    /** A human answered; `by` is `client_elicitation` or `cli:USER`. */
    approval_answered: {
      readonly approval_id: string;
      readonly call_id: string;
      readonly answer: string;
      readonly by: string;
      /** `"mrtr"` when answered on a 2026-07-28 retry with a sealed state. */
      readonly delivery?: string;
    };
    /** An approval passed `approval.ttl_s` unanswered or unused. */
    approval_expired: { readonly approval_id: string; readonly call_id: string };
  }
}

/** The client's answer to an elicitation. */
export type ElicitAnswer = "accept" | "decline" | "cancel" | "timeout";

/**
 * Asks the human in the client (present only when the client declared form
 * elicitation). Resolves with the answer; a client that cannot answer in
 * `timeoutMs` gives "timeout".
 */
export type Elicit = (message: string, timeoutMs: number, signal?: AbortSignal) => Promise<
  ElicitAnswer
>;

/** A refusal of the gate: nothing ran. */
export interface GateRefusal {
  readonly ok: false;
  readonly code: ResultCode;
  readonly reason: string;
  readonly approvalId: string | null;
  /** The job that already waits for this approval (an identical earlier call's). */
  readonly jobId?: string;
  /** Set when the wait bound passed unanswered: the call may become a job waiting for it. */
  readonly pending?: { readonly record: ApprovalRecord; readonly binding: ApprovalBinding };
}

/** Whether the held command may run now, under which approval. */
export type GateResult = { readonly ok: true; readonly approvalId: string } | GateRefusal;

/** What is held: the checked command and the call it belongs to. */
export interface HeldCommand {
  readonly callId: string;
  readonly commandRaw: string;
  readonly checked: Extract<CheckResult, { ok: true }>;
  /** The stdin's digest, when the call gave stdin (part of what is approved). */
  readonly stdin: unknown;
  /**
   * The stdin itself, when the call gave one: the human is shown its size
   * and, redacted, its start (round eight approved a `tee` whose input it
   * never saw).
   */
  readonly stdinBytes?: Uint8Array;
}

/** How much of a held command's stdin the human is shown (redacted). */
export const STDIN_PREVIEW_CHARS = 2_000;

/** The size and the redacted start of `bytes`, as the approval surfaces show them. */
export function stdinPreview(
  context: ServerContext,
  bytes: Uint8Array,
): { bytes: number; preview: string } {
  const text = new TextDecoder().decode(bytes.subarray(0, STDIN_PREVIEW_CHARS * 4));
  return {
    bytes: bytes.byteLength,
    preview: context.redactor.redact(text).slice(0, STDIN_PREVIEW_CHARS),
  };
}

const POLL_MS = 200;
const KEEP_ENDED_MS = 86_400_000;

/**
 * Holds `held` until a human answers, within the policy's bounds.
 *
 * @param context The server context (policy, audit log, policy hash).
 * @param caller Who asks: the approval is bound to them.
 * @param held The command as checked (every refusing check already passed).
 * @param elicit The client's elicitation, when it declared it (2025).
 * @param signal Aborted when the client cancels the call.
 * @param roundTrip The 2026-07-28 client's question and answer channel,
 *   when its request declared form elicitation.
 */
export async function holdForApproval(
  context: ServerContext,
  caller: CallerIdentity,
  held: HeldCommand,
  elicit: Elicit | undefined,
  signal: AbortSignal | undefined,
  roundTrip?: ClientRoundTrip,
): Promise<GateResult> {
  const settings = context.policy.approval ?? APPROVAL_DEFAULTS;
  const { checked } = held;
  const argv = [checked.argv[0] as string, ...checked.run.args];
  const cwd = jailRelative(context.policy.jailRoot, checked.cwd);
  const [prompt] = checked.prompts;
  if (prompt === undefined) throw new RangeError("holdForApproval() needs a prompted command.");
  const rule = `${prompt.command} ${prompt.entry}`;
  const justification = [...new Set(checked.prompts.map((p) => p.justification))].join(" ");

  // The operator's "always allow this": exactly this run, by this caller,
  // under this prompt rule (the judgement that led here was complete).
  if ((settings.alwaysAllow ?? []).length > 0) {
    const binding = await approvalBinding(context, caller, checked, held.stdin);
    const always = findAlwaysRule(settings.alwaysAllow ?? [], binding, rule);
    if (always !== null) {
      await context.audit.writeEvent("approval_always", {
        call_id: held.callId,
        always_id: always.id,
        rule,
        argv,
        cwd,
      });
      return { ok: true, approvalId: `always:${always.id}` };
    }
  }

  if (roundTrip !== undefined && settings.require !== "operator") {
    return await holdOverRoundTrip(context, roundTrip, {
      callId: held.callId,
      argv,
      cwd,
      rule,
      justification,
      digest: (await approvalBinding(context, caller, checked, held.stdin)).digest,
      message: approvalMessage(context, argv, held, cwd, rule, justification),
      ttlMs: settings.ttlMs,
    });
  }

  if (elicit !== undefined && settings.require !== "operator") {
    const approvalId = newApprovalId();
    await context.audit.writeEvent("approval_requested", {
      approval_id: approvalId,
      call_id: held.callId,
      via: "client",
      argv,
      cwd,
      rule,
      justification,
      expires_ms: Date.now() + settings.ttlMs,
    });
    const answer = await elicit(
      approvalMessage(context, argv, held, cwd, rule, justification),
      settings.ttlMs,
      signal,
    );
    if (answer === "timeout") {
      await context.audit.writeEvent("approval_expired", {
        approval_id: approvalId,
        call_id: held.callId,
      });
      return refuse("APPROVAL_EXPIRED", approvalId, expiredReason(approvalId));
    }
    const allowed = answer === "accept";
    await context.audit.writeEvent("approval_answered", {
      approval_id: approvalId,
      call_id: held.callId,
      answer: allowed ? "allow" : "deny",
      by: "client_elicitation",
    });
    return allowed ? { ok: true, approvalId } : refuse(
      "APPROVAL_DENIED",
      approvalId,
      `The human declined "${
        argv.join(" ")
      }" in the client (approval ${approvalId}); it did not run.`,
    );
  }

  const state = stateStoreFor(context.policy);
  // The loader refuses prompt rules without a state store; this is the
  // second check should that ever change.
  if (state === null) throw new Error("prompt rules need a state store");
  const approvals = new ApprovalStore(state);
  const binding = await approvalBinding(context, caller, checked, held.stdin);
  let record = await approvals.findOpen(binding);
  if (record?.job_id !== undefined && !(await jobIsLive(context, binding.owner, record.job_id))) {
    // Its job was lost with a crashed server: nothing will ever start it,
    // so it ends here and this call asks anew.
    await approvals.retire(record.id, "withdrawn");
    record = null;
  }
  if (record?.job_id !== undefined) {
    // An identical earlier call already waits as a job: this one neither
    // asks again nor races that job for the answer.
    return {
      ...refuse(
        "APPROVAL_PENDING",
        record.id,
        `This command already waits for approval ${record.id} as job ${record.job_id}; ` +
          `call job_status with job_id "${record.job_id}" and wait_ms to follow it.`,
      ),
      jobId: record.job_id,
    };
  }
  if (record === null) {
    const now = Date.now();
    record = {
      id: newApprovalId(),
      owner: binding.owner,
      digest: binding.digest,
      // The state store is durable: it keeps the redacted words (as the job
      // records do); the digest binds the exact run all the same.
      argv: redactArgv(context.redactor, argv),
      command_raw: context.redactor.redact(held.commandRaw),
      ...(held.stdinBytes === undefined ? {} : { stdin: stdinPreview(context, held.stdinBytes) }),
      cwd,
      policy_hash: binding.policyHash,
      rule,
      justification,
      created_ms: now,
      expires_ms: now + settings.ttlMs,
      state: "pending",
      answered_by: null,
      answered_ms: null,
    };
    await approvals.create(record);
    // Ended approvals are kept a day for `htmcp approvals list`, then dropped.
    await approvals.sweep(KEEP_ENDED_MS).catch(() => {});
    await context.audit.writeEvent("approval_requested", {
      approval_id: record.id,
      call_id: held.callId,
      via: "operator",
      argv,
      cwd,
      rule,
      justification,
      expires_ms: record.expires_ms,
    });
  }
  return await waitForAnswer(
    context,
    approvals,
    record,
    binding,
    held.callId,
    settings.waitMs,
    signal,
  );
}

/**
 * What an approval of `checked` binds: the caller, a digest of the exact run
 * (every stage's path, arguments and environment, the redirections, the
 * resolved cwd, the stdin digest) and the running policy's hash.
 */
export async function approvalBinding(
  context: ServerContext,
  caller: CallerIdentity,
  checked: Extract<CheckResult, { ok: true }>,
  stdin: unknown,
): Promise<ApprovalBinding> {
  const argv = [checked.argv[0] as string, ...checked.run.args];
  return {
    owner: sessionOwner(caller.clientId),
    digest: await runDigest({
      argv,
      run: checked.run,
      cwd: checked.cwd,
      plan: checked.plan,
      stdin: stdin ?? null,
    }),
    policyHash: context.policyHash,
  };
}

/** Whether the owner's job `id` may still start or is running (after marking lost ones). */
async function jobIsLive(context: ServerContext, owner: string, id: string): Promise<boolean> {
  const jobs = jobsFor(context);
  if (jobs === null) return false;
  await jobs.sweep();
  const job = await jobs.store.get(owner, id);
  return job !== null && isLiveState(job.state);
}

/** Polls the record until it is answered, expires, or the wait bound passes. */
async function waitForAnswer(
  context: ServerContext,
  approvals: ApprovalStore,
  first: ApprovalRecord,
  binding: ApprovalBinding,
  callId: string,
  waitMs: number,
  signal: AbortSignal | undefined,
): Promise<GateResult> {
  const id = first.id;
  const giveUpAt = performance.now() + waitMs;
  let record: ApprovalRecord | null = first;
  for (;;) {
    if (record === null) {
      return refuse("APPROVAL_DENIED", id, `Approval ${id} no longer exists; nothing ran.`);
    }
    if (record.job_id !== undefined) {
      // Another identical call outlived its wait and made the job that now
      // owns this approval: only that job may use it.
      return {
        ...refuse(
          "APPROVAL_PENDING",
          id,
          `This command waits for approval ${id} as job ${record.job_id}; call job_status ` +
            `with job_id "${record.job_id}" and wait_ms to follow it.`,
        ),
        jobId: record.job_id,
      };
    }
    if (record.state === "pending" && Date.now() >= record.expires_ms) {
      await approvals.expire(id);
      record = { ...record, state: "expired" };
    }
    if (record.state === "allowed" || record.state === "denied") {
      if (record.answer_audited !== true) {
        await context.audit.writeEvent("approval_answered", {
          approval_id: id,
          call_id: callId,
          answer: record.state === "allowed" ? "allow" : "deny",
          by: record.answered_by ?? "unknown",
        });
        await approvals.markAnswerAudited(id);
      }
      if (record.state === "denied") {
        return refuse(
          "APPROVAL_DENIED",
          id,
          `The operator (${record.answered_by ?? "unknown"}) denied approval ${id}; nothing ran.`,
        );
      }
      // Used once: of two calls racing for this approval, one runs.
      const used = await approvals.consume(id, binding);
      if (used.ok) return { ok: true, approvalId: id };
      if (used.state === "expired") {
        await context.audit.writeEvent("approval_expired", { approval_id: id, call_id: callId });
        return refuse("APPROVAL_EXPIRED", id, expiredReason(id));
      }
      return refuse(
        "APPROVAL_DENIED",
        id,
        `Approval ${id} was already used (an approval runs its command once); nothing ran.`,
      );
    }
    if (record.state === "expired") {
      await context.audit.writeEvent("approval_expired", { approval_id: id, call_id: callId });
      return refuse("APPROVAL_EXPIRED", id, expiredReason(id));
    }
    if (record.state === "used" || record.state === "withdrawn") {
      return refuse(
        "APPROVAL_DENIED",
        id,
        `Approval ${id} was ${
          record.state === "used"
            ? "already used (an approval runs its command once)"
            : "withdrawn (the job waiting for it was cancelled)"
        }; nothing ran.`,
      );
    }
    if (signal?.aborted) {
      return refuse(
        "CANCELLED",
        id,
        `The call was cancelled while approval ${id} was pending; nothing ran.`,
      );
    }
    const left = giveUpAt - performance.now();
    if (left <= 0) {
      return {
        ...refuse(
          "APPROVAL_PENDING",
          id,
          pendingSentence(id),
        ),
        pending: { record, binding },
      };
    }
    await sleepUnlessAborted(Math.min(POLL_MS, left), signal);
    record = await approvals.get(id);
  }
}

/**
 * What the model is told while an operator's answer is awaited: the id, and
 * every operator path, so the human it relays this to knows where to answer.
 */
export function pendingSentence(id: string): string {
  return `The command waits for a human: approval ${id} is pending until the operator runs ` +
    `"htmcp approvals allow ${id}" (or deny) on the server's host, or answers it on htmcp's ` +
    `/approvals page where that is served.`;
}

function refuse(code: ResultCode, approvalId: string | null, reason: string): GateRefusal {
  return { ok: false, code, reason, approvalId };
}

function expiredReason(id: string): string {
  return `Approval ${id} expired (approval.ttl_s) before it was answered or used; nothing ran.`;
}

/** What the human reads: exactly what runs, where, and why the operator asked to be asked. */
function approvalMessage(
  context: ServerContext,
  argv: readonly string[],
  held: HeldCommand,
  cwd: string,
  rule: string,
  justification: string,
): string {
  const stages = held.checked.plan === null
    ? []
    : held.checked.plan.pipelines.flatMap((p) =>
      p.stages.map((stage) => JSON.stringify([stage.argv[0], ...stage.run.args]))
    );
  // The text whenever it says more than the argv (a redirection, a plan),
  // and the stdin: the human approves all of what runs (round eight).
  const text = held.commandRaw === argv.join(" ") ? [] : [`Text: ${visibleText(held.commandRaw)}`];
  const stdin = held.stdinBytes === undefined ? null : stdinPreview(context, held.stdinBytes);
  return [
    "htmcp: a command needs your approval before it runs (once).",
    `Command: ${JSON.stringify(argv)}`,
    ...(stages.length > 1 ? [`Stages: ${stages.join(" ")}`] : []),
    ...text,
    ...(stdin === null ? [] : [
      `Standard input (${stdin.bytes} bytes${
        stdin.preview.length < stdin.bytes ? ", its start" : ""
      }, redacted): ${visibleText(JSON.stringify(stdin.preview))}`,
    ]),
    `Working directory (in the jail): ${visibleText(cwd)}`,
    `Rule: ${rule}`,
    `Why the operator asks: ${justification}`,
    "Accept to run it once; decline or cancel and it does not run.",
  ].join("\n");
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = after(ms, done);
    function done() {
      timer.cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
