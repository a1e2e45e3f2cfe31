/**
 * W3C trace context from `_meta`: only the W3C form is taken; anything else
 * is ignored (and so never echoed into a record, a span or a log line).
 */
import assert from "node:assert/strict";
import {
  parseTraceparent,
  parseTracestate,
  traceContextFromMeta,
} from "../../src/audit/trace_context.ts";
import { buildAttempt } from "../../src/audit/build.ts";

const VALID = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

Deno.test("parseTraceparent() takes the W3C version-00 form and its ids", () => {
  assert.deepEqual(parseTraceparent(VALID), {
    traceparent: VALID,
    traceId: "0af7651916cd43dd8448eb211c80319c",
    parentId: "b7ad6b7169203331",
  });
});

Deno.test("parseTraceparent() ignores every malformed value", () => {
  for (
    const bad of [
      VALID.toUpperCase(),
      `${VALID}\n`,
      `${VALID}-extra`,
      ` ${VALID}`,
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
      "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",
      "",
      42,
      null,
      { toString: () => VALID },
    ]
  ) {
    assert.equal(parseTraceparent(bad), null, JSON.stringify(String(bad)));
  }
});

Deno.test("parseTracestate() keeps a valid list and drops a malformed one", () => {
  assert.equal(
    parseTracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE"),
    "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
  );
  assert.equal(parseTracestate("vendor@tenant=x"), "vendor@tenant=x");
  assert.equal(parseTracestate("UPPER=x"), null);
  assert.equal(parseTracestate("a=b\nc"), null);
  assert.equal(parseTracestate("a=" + "x".repeat(600)), null);
  assert.equal(parseTracestate(undefined), null);
});

Deno.test("traceContextFromMeta() reads each key once and needs a valid traceparent", () => {
  let reads = 0;
  const meta = {
    get traceparent() {
      reads++;
      return reads === 1 ? VALID : "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01";
    },
    tracestate: "k=v",
  };
  const context = traceContextFromMeta(meta);
  assert.equal(reads, 1);
  assert.equal(context?.traceparent, VALID);
  assert.equal(context?.tracestate, "k=v");
  assert.equal(traceContextFromMeta({ tracestate: "k=v" }), null, "tracestate alone is ignored");
  assert.equal(traceContextFromMeta({ traceparent: "garbage" }), null);
  assert.equal(traceContextFromMeta(undefined), null);
  assert.equal(traceContextFromMeta("00-..."), null);
});

Deno.test("buildAttempt() keeps a valid traceparent and leaves any other value out", () => {
  const fields = {
    call_id: "c1",
    tool: "run_command",
    client_id: null,
    command_raw: "ls",
    argv: ["ls"],
    cwd: null,
    verdict: "allow" as const,
    code: null,
    reason: "allowed",
  };
  const kept = buildAttempt({ ...fields, traceparent: VALID }, (s) => s);
  assert.equal(kept.fields.traceparent, VALID);
  const dropped = buildAttempt({ ...fields, traceparent: `${VALID}\n{"forged":1}` }, (s) => s);
  assert.ok(!("traceparent" in dropped.fields));
  const none = buildAttempt(fields, (s) => s);
  assert.ok(!("traceparent" in none.fields));
});
