/**
 * The approval question asked through a 2026-07-28 multi round-trip result:
 * the same question, for the same held command, as the 2025 elicitation
 * request, delivered as the call's answer instead of a request to the
 * client.
 *
 * A first call records the request and hands the question out (the face
 * seals a state binding it to this caller, tool, arguments, policy and run,
 * valid `min(approval.ttl_s, 15 min)`, usable once) and is refused
 * `APPROVAL_PENDING`: nothing runs. The retried call brings the human's
 * answer, which reaches this module only after its state was verified; it
 * counts for the run it was asked about (same run digest) and for that
 * retry alone, so a later identical call asks again.
 *
 * @module
 */
import type { ServerContext } from "../context/mod.ts";
import { newApprovalId } from "../approvals/mod.ts";
import {
  type ApprovalQuestion,
  MAX_STATE_TTL_MS,
  type RoundTripAnswer,
} from "../approvals/round_trip.ts";

/** The 2026-07-28 client's channel for one call. */
export interface ClientRoundTrip {
  /** The human's answer from this retried call's verified state, or null. */
  readonly answer: RoundTripAnswer | null;
  /** Hands the question out; the call's result then carries it. */
  ask(question: ApprovalQuestion): void;
}

/** What the gate held, as the human is shown it. */
export interface HeldView {
  readonly callId: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly rule: string;
  readonly justification: string;
  /** The run digest: the approval is for exactly this run. */
  readonly digest: string;
  readonly message: string;
  readonly ttlMs: number;
}

/** What the round trip came to (a `GateResult` of the approval gate). */
export type RoundTripResult =
  | { readonly ok: true; readonly approvalId: string }
  | {
    readonly ok: false;
    readonly code: "APPROVAL_DENIED" | "APPROVAL_PENDING";
    readonly reason: string;
    readonly approvalId: string;
  };

/** Answers the held command from the round trip's answer, or asks. */
export async function holdOverRoundTrip(
  context: ServerContext,
  roundTrip: ClientRoundTrip,
  held: HeldView,
): Promise<RoundTripResult> {
  const answer = roundTrip.answer;
  if (answer !== null) {
    // Every answer is on record, even one that ends up approving nothing.
    const allowed = answer.action === "accept";
    await context.audit.writeEvent("approval_answered", {
      approval_id: answer.approvalId,
      call_id: held.callId,
      answer: allowed ? "allow" : "deny",
      by: "client_elicitation",
      delivery: "mrtr",
    });
  }
  // An answer about another run (the same arguments now resolve to other
  // files, another binary) approves nothing: that run is asked about anew.
  if (answer !== null && answer.runDigest === held.digest) {
    const allowed = answer.action === "accept";
    return allowed ? { ok: true, approvalId: answer.approvalId } : {
      ok: false,
      code: "APPROVAL_DENIED",
      approvalId: answer.approvalId,
      reason: `The human declined "${
        held.argv.join(" ")
      }" in the client (approval ${answer.approvalId}); it did not run.`,
    };
  }
  const approvalId = newApprovalId();
  const ttlMs = Math.min(held.ttlMs, MAX_STATE_TTL_MS);
  await context.audit.writeEvent("approval_requested", {
    approval_id: approvalId,
    call_id: held.callId,
    via: "client",
    argv: held.argv,
    cwd: held.cwd,
    rule: held.rule,
    justification: held.justification,
    expires_ms: Date.now() + ttlMs,
    delivery: "mrtr",
  });
  roundTrip.ask({ approvalId, runDigest: held.digest, message: held.message, ttlMs });
  return {
    ok: false,
    code: "APPROVAL_PENDING",
    approvalId,
    reason: `The command waits for the human's answer in the client (approval ${approvalId}); ` +
      "nothing ran. The client asks and calls again with the answer.",
  };
}
