import assert from "node:assert/strict";
import {
  approvalPayloadOf,
  declaresFormElicitation,
  QUESTION_META_KEY,
  readQuestion,
  readRoundTrip,
  ROUND_TRIP_META_KEY,
  roundTripMeta,
} from "../../src/approvals/round_trip.ts";

const ANSWER = { approvalId: "a".repeat(32), runDigest: "d".repeat(64), action: "accept" } as const;

Deno.test("readRoundTrip() reads back what the face wrote in this process", () => {
  const meta = { [ROUND_TRIP_META_KEY]: roundTripMeta({ form: true, answer: ANSWER }) };
  assert.deepEqual(readRoundTrip(meta), { form: true, answer: ANSWER });
  const unanswered = { [ROUND_TRIP_META_KEY]: roundTripMeta({ form: false, answer: null }) };
  assert.deepEqual(readRoundTrip(unanswered), { form: false, answer: null });
});

Deno.test("readRoundTrip() refuses a round trip without this process's link token", () => {
  const written = roundTripMeta({ form: true, answer: ANSWER });
  for (const token of [undefined, "", "guessed", crypto.randomUUID()]) {
    assert.equal(readRoundTrip({ [ROUND_TRIP_META_KEY]: { ...written, token } }), null);
  }
  assert.equal(readRoundTrip({ [ROUND_TRIP_META_KEY]: { form: true, answer: ANSWER } }), null);
  assert.equal(readRoundTrip(undefined), null);
  assert.equal(readRoundTrip({}), null);
});

Deno.test("readRoundTrip() refuses an answer with an action other than accept, decline or cancel", () => {
  const written = roundTripMeta({ form: true, answer: ANSWER });
  for (const action of ["yes", "", null, 1, "ACCEPT"]) {
    const meta = { [ROUND_TRIP_META_KEY]: { ...written, answer: { ...ANSWER, action } } };
    assert.equal(readRoundTrip(meta), null, String(action));
  }
  const noDigest = { ...written, answer: { approvalId: ANSWER.approvalId, action: "accept" } };
  assert.equal(readRoundTrip({ [ROUND_TRIP_META_KEY]: noDigest }), null);
});

Deno.test("declaresFormElicitation() counts form and a bare elicitation, not url alone", () => {
  assert.equal(declaresFormElicitation({ elicitation: { form: {} } }), true);
  assert.equal(declaresFormElicitation({ elicitation: {} }), true);
  assert.equal(declaresFormElicitation({ elicitation: { form: {}, url: {} } }), true);
  assert.equal(declaresFormElicitation({ elicitation: { url: {} } }), false);
  assert.equal(declaresFormElicitation({ elicitation: true }), false);
  assert.equal(declaresFormElicitation({ sampling: {} }), false);
  assert.equal(declaresFormElicitation({}), false);
  assert.equal(declaresFormElicitation(undefined), false);
  assert.equal(declaresFormElicitation([]), false);
});

Deno.test("approvalPayloadOf() reads only an approval question's state payload", () => {
  const payload = { kind: "approval", approval_id: "a", run_digest: "d" };
  assert.deepEqual(approvalPayloadOf(payload), payload);
  assert.equal(approvalPayloadOf({ approved: true }), null);
  assert.equal(approvalPayloadOf({ ...payload, kind: "other" }), null);
  assert.equal(approvalPayloadOf({ ...payload, run_digest: 5 }), null);
  assert.equal(approvalPayloadOf("approval"), null);
  assert.equal(approvalPayloadOf(null), null);
});

Deno.test("readQuestion() reads a question from a result's _meta and nothing else", () => {
  const question = { approvalId: "a", runDigest: "d", message: "m", ttlMs: 1_000 };
  assert.deepEqual(readQuestion({ _meta: { [QUESTION_META_KEY]: question } }), question);
  assert.equal(readQuestion({ content: [] }), null);
  assert.equal(readQuestion({ _meta: { [QUESTION_META_KEY]: { ...question, ttlMs: "1" } } }), null);
  assert.equal(readQuestion({ structuredContent: { [QUESTION_META_KEY]: question } }), null);
});
