/**
 * Fair queueing over one stdio connection, real SDK client and real server
 * process: eight calls in flight with the default `max_concurrent = 4` all
 * run (the four beyond the cap wait instead of coming back BUSY), each with
 * its attempt and outcome; a client that cancels a waiting call gets
 * `CANCELLED`, nothing of it runs, and its refusal is audited.
 */
import assert from "node:assert/strict";
import { exists, startHarness } from "../_helpers/stdio_harness.ts";

Deno.test("stdio: 8 calls in flight with max_concurrent = 4 all run; the 4 beyond the cap waited, audited with queued_ms", async () => {
  const h = await startHarness();
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const results = await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) => h.call("run_command", { command: `sleep 0.3` }).then((r) => [i, r.code] as const),
      ),
    );
    assert.deepEqual(results.map(([, code]) => code), Array(8).fill("OK"));
    const records = await h.records();
    const attempts = records.filter((r) => r.kind === "attempt");
    assert.equal(attempts.length, 8);
    assert.ok(attempts.every((r) => r.verdict === "allow"));
    // At most four ran at once, so at least four had to wait for a slot.
    assert.ok(attempts.filter((r) => typeof r.queued_ms === "number").length >= 4);
    const ended = new Set(records.filter((r) => r.kind === "outcome").map((r) => r.call_id));
    assert.ok(attempts.every((r) => ended.has(r.call_id)));
  } finally {
    await h.close();
  }
});

Deno.test("stdio: a call cancelled while it waits for a slot is CANCELLED, never runs, and its refusal is audited", async () => {
  const h = await startHarness({ extraToml: "[limits]\nmax_concurrent = 1\n" });
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const slow = h.call("run_command", { command: "sleep 1" });
    // The slot is taken once the slow call's attempt is on disk.
    for (let i = 0; i < 200; i++) {
      if ((await h.records()).some((r) => r.kind === "attempt")) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const controller = new AbortController();
    const waiting = h.call("run_command", { command: "touch canary" }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    await waiting.then(() => {}, () => {});
    assert.equal((await slow).code, "OK");
    assert.equal(await exists(`${h.jail}/canary`), false);
    let cancelled: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && cancelled === undefined; i++) {
      cancelled = (await h.records()).find((r) => r.kind === "attempt" && r.code === "CANCELLED");
      if (cancelled === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(cancelled?.verdict, "deny");
    assert.equal(cancelled?.command_raw, "touch canary");
    assert.match(String(cancelled?.reason), /while it waited for a slot/);
    // Nothing ran for it: no outcome record for its call id.
    const outcomes = (await h.records()).filter((r) => r.kind === "outcome");
    assert.ok(outcomes.every((r) => r.call_id !== cancelled?.call_id));
  } finally {
    await h.close();
  }
});
