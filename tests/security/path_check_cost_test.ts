/**
 * Attack class: the path check as the denial of service. One 16 KB word
 * `x/..=x/..=...` holds a quadratic amount of candidate text (every text
 * after an `=` is a candidate); before, its check ran for minutes before any
 * slot, deadline or audit record. Now the candidate text is counted in one
 * pass and refused over its budget, every lookup counts against a budget
 * and a deadline, and the checks run under the concurrency slot (a call
 * waiting for one is not judged yet), so a refusal (BUSY and CANCELLED
 * included) is audited. Speed figures live in
 * `bench/path_check_bench.ts`; these tests assert verdicts only.
 */
import { equal, match, ok } from "node:assert/strict";
import { MAX_CANDIDATE_BYTES } from "../../src/policy/path_candidates.ts";
import { startHarness } from "../_helpers/stdio_harness.ts";
import { assertRefused, layer1, LAYER1_TOML } from "./_layer1.ts";
import { runCommandTool } from "../../src/tools/run_command.ts";
import { STDIO_CALLER } from "../../src/tools/caller.ts";

const EQUALS_WORD = "x/..=".repeat(3_200);
const DOTS_WORD = "x/../".repeat(3_200) + "notes.txt";

Deno.test("layer 1 refuses the 16 KB x/..= word over the candidate budget, audited", async () => {
  await using fx = await layer1();
  await Deno.mkdir(`${fx.jail}/x`);
  const result = await assertRefused(fx, `cat ${EQUALS_WORD}`, "POLICY_DENIED");
  match(result.policy_reason, new RegExp(`at most ${MAX_CANDIDATE_BYTES}`));
});

Deno.test("layer 1 judges a 16 KB x/../ word of 6,400 segments and allows it (it stays inside)", async () => {
  await using fx = await layer1();
  await Deno.mkdir(`${fx.jail}/x`);
  const explained = await fx.explain(`cat ${DOTS_WORD}`);
  equal(explained.code, "OK", explained.policy_reason);
  const escaping = await fx.explain(`cat ${"x/../".repeat(3_200)}../outside/secret.txt`);
  equal(escaping.code, "PATH_ESCAPE");
});

Deno.test("layer 1 takes the concurrency slot before the path checks: a full server answers explain BUSY, queues run_command unjudged, audited", async () => {
  await using fx = await layer1();
  const held = [];
  for (let slot = 0; slot < fx.context.policy.limits.maxConcurrent; slot++) {
    const taken = fx.context.limiter.tryAcquire(null, 1);
    ok(taken.ok);
    held.push(taken.release);
  }
  try {
    const explained = await fx.explain(`cat ${EQUALS_WORD}`);
    equal(explained.code, "BUSY");
    // run_command waits for a slot; while it waits nothing is judged or recorded.
    const cancel = new AbortController();
    const ran = runCommandTool(
      fx.context,
      STDIO_CALLER,
      { command: `cat ${EQUALS_WORD}` },
      cancel.signal,
    );
    for (let i = 0; i < 200 && fx.context.limiter.waiting === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    equal(fx.context.limiter.waiting, 1);
    equal((await fx.records()).filter((r) => r.kind === "attempt").length, 0);
    cancel.abort();
    equal((await ran).code, "CANCELLED");
    const records = await fx.records();
    ok(records.some((r) => r.kind === "explain" && r.code === "BUSY"));
    const attempts = records.filter((r) => r.kind === "attempt");
    equal(attempts.length, 1);
    equal(attempts[0]?.code, "CANCELLED");
    equal(attempts[0]?.verdict, "deny");
    // Refused before the path checks: the reason is the queue's, not the candidate budget's.
    match(String(attempts[0]?.reason), /while it waited for a slot/);
  } finally {
    for (const release of held) release();
  }
  equal((await fx.run("cat notes.txt")).code, "OK");
});

Deno.test("the real client gets the budget refusal for the 16 KB word from explain_command", async () => {
  const harness = await startHarness({
    allow: ["cat"],
    files: { "x/keep": "" },
    extraToml: LAYER1_TOML,
    sandbox: "none",
  });
  try {
    const result = await harness.call("explain_command", { command: `cat ${EQUALS_WORD}` });
    equal(result.code, "POLICY_DENIED");
    match(result.policy_reason, /possible paths/);
    const records = await harness.records();
    ok(records.some((r) => r.kind === "explain" && r.code === "POLICY_DENIED"));
  } finally {
    await harness.close();
  }
});
