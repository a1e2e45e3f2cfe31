/**
 * What the 2026-07-28 face and the shared tool server tell each other about
 * a question asked through a multi round-trip result (MRTR), across the
 * in-process link: the face passes the retried call's verified answer in,
 * the tool passes its question out. Plain data, no SDK, so the 2025 path
 * that reads it loads nothing more.
 *
 * Trust: the face builds the tool call's `_meta` itself (the client's own
 * `_meta` is never passed on in that era), and a 2025 client's `_meta` does
 * reach the tool server unchanged; so a round trip is read only for a
 * caller of the 2026 era *and* only when it carries this process's link
 * token, which no client can know. Either check alone keeps a client from
 * writing its own "accept".
 *
 * @module
 */

/** Where the face puts the round trip in the linked tool call's `_meta`. */
export const ROUND_TRIP_META_KEY = "dev.htmcp/clientRoundTrip";
/** Where the tool puts its question in the linked result's `_meta`. */
export const QUESTION_META_KEY = "dev.htmcp/approvalQuestion";
/** The `inputRequests` key of the approval question (and of its answer). */
export const APPROVAL_INPUT_KEY = "htmcp_approval";
/**
 * Longest lifetime a request state may be sealed with. An approval asked
 * over MRTR lives `min(approval.ttl_s, this)`: the client must answer
 * within it.
 */
export const MAX_STATE_TTL_MS = 15 * 60_000;

/** Random per process: a round trip without it was not written by the face. */
const LINK_TOKEN = crypto.randomUUID();

/** The human's answer from a retried call, after its sealed state was verified. */
export interface RoundTripAnswer {
  readonly approvalId: string;
  /** The run digest the question was asked for: another run is asked anew. */
  readonly runDigest: string;
  readonly action: "accept" | "decline" | "cancel";
}

/** What the face tells the tool about this call's client round trip. */
export interface RoundTripIn {
  /** The request's own client capabilities declare form elicitation. */
  readonly form: boolean;
  readonly answer: RoundTripAnswer | null;
}

/** The question the tool asks; the face seals its state and sends it as `input_required`. */
export interface ApprovalQuestion {
  readonly approvalId: string;
  readonly runDigest: string;
  readonly message: string;
  readonly ttlMs: number;
}

/** The sealed state's payload of an approval question. */
export interface ApprovalStatePayload {
  readonly kind: "approval";
  readonly approval_id: string;
  readonly run_digest: string;
}

/** The `_meta` value the face writes for one linked tool call. */
export function roundTripMeta(value: RoundTripIn): Record<string, unknown> {
  return { token: LINK_TOKEN, form: value.form, answer: value.answer };
}

/**
 * Reads the round trip of a linked tool call: null unless the face wrote it
 * in this process (the link token matches) and every field has its type.
 */
export function readRoundTrip(meta: unknown): RoundTripIn | null {
  if (!isRecord(meta)) return null;
  const value = meta[ROUND_TRIP_META_KEY];
  if (!isRecord(value) || value.token !== LINK_TOKEN || typeof value.form !== "boolean") {
    return null;
  }
  const answer = value.answer;
  if (answer === null) return { form: value.form, answer: null };
  if (
    !isRecord(answer) || typeof answer.approvalId !== "string" ||
    typeof answer.runDigest !== "string" ||
    (answer.action !== "accept" && answer.action !== "decline" && answer.action !== "cancel")
  ) {
    return null;
  }
  return {
    form: value.form,
    answer: { approvalId: answer.approvalId, runDigest: answer.runDigest, action: answer.action },
  };
}

/** The question in a linked result's `_meta`, or null. */
export function readQuestion(result: Record<string, unknown>): ApprovalQuestion | null {
  const meta = result._meta;
  if (!isRecord(meta)) return null;
  const q = meta[QUESTION_META_KEY];
  if (
    !isRecord(q) || typeof q.approvalId !== "string" || typeof q.runDigest !== "string" ||
    typeof q.message !== "string" || typeof q.ttlMs !== "number"
  ) {
    return null;
  }
  return { approvalId: q.approvalId, runDigest: q.runDigest, message: q.message, ttlMs: q.ttlMs };
}

/** A verified state's payload as an approval question's, or null for any other payload. */
export function approvalPayloadOf(payload: unknown): ApprovalStatePayload | null {
  if (
    !isRecord(payload) || payload.kind !== "approval" ||
    typeof payload.approval_id !== "string" || typeof payload.run_digest !== "string"
  ) {
    return null;
  }
  return { kind: "approval", approval_id: payload.approval_id, run_digest: payload.run_digest };
}

/**
 * Whether client capabilities declare form elicitation. A bare
 * `elicitation: {}` counts as form, as the spec says for backwards
 * compatibility (and as both SDKs read it); `elicitation: { url: {} }`
 * alone does not.
 */
export function declaresFormElicitation(capabilities: unknown): boolean {
  if (!isRecord(capabilities)) return false;
  const elicitation = capabilities.elicitation;
  if (!isRecord(elicitation)) return false;
  if (isRecord(elicitation.form)) return true;
  return elicitation.form === undefined && elicitation.url === undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
