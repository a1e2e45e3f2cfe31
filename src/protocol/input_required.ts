/**
 * The 2026-07-28 delivery of an approval question: multi round-trip
 * results (MRTR). The era has no server-to-client request, so a question is
 * the call's answer: `resultType: "input_required"` with one form
 * elicitation and a sealed `requestState`; the client asks its human and
 * calls again with the answer and the state echoed.
 *
 * This module is transport only. Which commands are held, what the human
 * reads and what an answer allows are decided once, by the approval gate
 * behind the link; here a question is carried out and its answer carried
 * back in, after the state that binds them was verified.
 *
 * Deny on failure: an answer counts only with a state we sealed for this
 * caller, tool, arguments and policy, unexpired and unused (checked before
 * this module sees it); an answer that is not a well-formed elicitation
 * result under the asked key is refused with a JSON-RPC error and nothing
 * runs; a retry that carries no answer at all is asked again.
 *
 * @module
 */
import {
  type CallToolResult,
  inputRequired,
  type InputRequiredResult,
  inputResponse,
  ProtocolError,
  type ServerContext,
} from "@modelcontextprotocol/server";
import {
  APPROVAL_INPUT_KEY,
  approvalPayloadOf,
  type ApprovalStatePayload,
  MAX_STATE_TTL_MS,
  readQuestion,
  type RoundTripAnswer,
} from "../approvals/round_trip.ts";

/** One tool call, as the state is bound to it. */
export interface RoundTripCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** Why a retry's answer was refused at the protocol edge. */
export type AnswerRefusal =
  | "input_responses_not_an_object"
  | "input_response_missing"
  | "input_response_malformed";

/** What the round trip needs from the era: the sealer and the audit log. */
export interface RoundTripDeps {
  /** Seals `payload` for `call` (caller, tool, arguments, policy), valid `ttlMs`. */
  readonly seal: (call: RoundTripCall, payload: ApprovalStatePayload, ttlMs: number) => Promise<
    string
  >;
  /** Audits an answer refused here (nothing ran). */
  readonly refused: (call: RoundTripCall, approvalId: string, reason: AnswerRefusal) => Promise<
    void
  >;
}

/** The spec's "invalid params", with our reason, for an answer we cannot read. */
const INVALID_PARAMS = -32602;

/**
 * The answer a retried call carries for the approval its verified state
 * names; null when the state is not an approval's or the retry carries no
 * `inputResponses` (the question is then asked again).
 *
 * @throws {ProtocolError} `-32602` when `inputResponses` is not an object
 *   with a well-formed elicitation result under the asked key (audited first)
 */
export async function answerOf(
  ctx: ServerContext,
  verifiedPayload: unknown,
  call: RoundTripCall,
  deps: RoundTripDeps,
): Promise<RoundTripAnswer | null> {
  const pending = approvalPayloadOf(verifiedPayload);
  if (pending === null) return null;
  const responses = ctx.mcpReq.inputResponses;
  if (responses === undefined) return null;
  const dropped = ctx.mcpReq.droppedInputResponseKeys ?? [];
  // The SDK turns a non-object `inputResponses` (null, a list, a number)
  // into an empty map; an empty map answers nothing either, so both are
  // refused alike rather than read as "no answer".
  const refusal: AnswerRefusal | null = dropped.includes(APPROVAL_INPUT_KEY)
    ? "input_response_malformed"
    : Object.keys(responses).length === 0 && dropped.length === 0
    ? "input_responses_not_an_object"
    : !Object.hasOwn(responses, APPROVAL_INPUT_KEY)
    ? "input_response_missing"
    : null;
  const view = refusal === null ? inputResponse(responses, APPROVAL_INPUT_KEY) : null;
  if (refusal !== null || view === null || view.kind !== "elicit") {
    const reason = refusal ?? "input_response_malformed";
    await deps.refused(call, pending.approval_id, reason);
    throw new ProtocolError(
      INVALID_PARAMS,
      `Invalid inputResponses: "${APPROVAL_INPUT_KEY}" must hold the elicitation result ` +
        "(action accept, decline or cancel); nothing ran.",
      { reason },
    );
  }
  return { approvalId: pending.approval_id, runDigest: pending.run_digest, action: view.action };
}

/**
 * The linked tool's result as the client gets it: an approval question
 * becomes `input_required` with its state sealed for this call; any other
 * result passes unchanged.
 */
export async function deliverQuestion(
  result: Record<string, unknown>,
  call: RoundTripCall,
  deps: RoundTripDeps,
): Promise<CallToolResult | InputRequiredResult> {
  const question = readQuestion(result);
  if (question === null) return result as CallToolResult;
  const requestState = await deps.seal(
    call,
    { kind: "approval", approval_id: question.approvalId, run_digest: question.runDigest },
    Math.min(question.ttlMs, MAX_STATE_TTL_MS),
  );
  return inputRequired({
    inputRequests: {
      [APPROVAL_INPUT_KEY]: inputRequired.elicit({
        mode: "form",
        message: question.message,
        // No fields: the answer carries nothing but the human's choice.
        requestedSchema: { type: "object", properties: {} },
      }),
    },
    requestState,
  });
}
