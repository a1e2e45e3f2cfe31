/**
 * `ApprovalStore` over the real local state store (owner-only files, flock):
 * an approval serves only its own caller, run and policy, once, before it
 * expires; answers are taken only while pending.
 */
import assert from "node:assert/strict";
import { type ApprovalRecord, ApprovalStore, newApprovalId } from "../../src/approvals/mod.ts";
import { LocalStateStore } from "../../src/state/mod.ts";

async function withStore(fn: (store: ApprovalStore, clock: { now: number }) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-approvals-" });
  const clock = { now: 1_000_000 };
  const state = new LocalStateStore(`${dir}/state`);
  try {
    await fn(new ApprovalStore(state, () => clock.now), clock);
  } finally {
    await state.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function pending(id: string): ApprovalRecord {
  return {
    id,
    owner: "local",
    digest: "d1",
    argv: ["/usr/bin/git", "push"],
    command_raw: "git push",
    cwd: ".",
    policy_hash: "sha256:p1",
    rule: "git push",
    justification: "a push publishes commits",
    created_ms: 1_000_000,
    expires_ms: 1_060_000,
    state: "pending",
    answered_by: null,
    answered_ms: null,
  };
}

const BINDING = { owner: "local", digest: "d1", policyHash: "sha256:p1" };

Deno.test("an allowed approval is used once by its own binding; a replay is refused", async () => {
  await withStore(async (store) => {
    const id = newApprovalId();
    await store.create(pending(id));
    assert.equal((await store.consume(id, BINDING)).ok, false, "pending is not usable");
    const answered = await store.answer(id, true, "cli:root");
    assert.ok(answered.ok);
    assert.equal(answered.record.answered_by, "cli:root");
    const used = await store.consume(id, BINDING);
    assert.ok(used.ok);
    const replay = await store.consume(id, BINDING);
    assert.deepEqual([replay.ok, !replay.ok && replay.state], [false, "used"]);
    assert.equal((await store.get(id))?.state, "used");
    const late = await store.answer(id, true, "cli:root");
    assert.deepEqual([late.ok, !late.ok && late.state], [false, "used"]);
  });
});

Deno.test("another caller, a changed run or a changed policy cannot use an allowed approval", async () => {
  await withStore(async (store) => {
    const id = newApprovalId();
    await store.create(pending(id));
    assert.ok((await store.answer(id, true, "cli:root")).ok);
    for (
      const other of [
        { ...BINDING, owner: "client:someone-else" },
        { ...BINDING, digest: "d2" },
        { ...BINDING, policyHash: "sha256:p2" },
      ]
    ) {
      const refused = await store.consume(id, other);
      assert.deepEqual([refused.ok, !refused.ok && refused.state], [false, "missing"]);
      assert.equal(await store.findOpen(other), null);
    }
    assert.equal((await store.get(id))?.state, "allowed", "refusals change nothing");
  });
});

Deno.test("an approval past its ttl can be neither answered nor used, and is marked expired", async () => {
  await withStore(async (store, clock) => {
    const first = newApprovalId();
    await store.create(pending(first));
    clock.now = 1_060_000;
    const late = await store.answer(first, true, "cli:root");
    assert.deepEqual([late.ok, !late.ok && late.state], [false, "expired"]);
    assert.equal((await store.get(first))?.state, "expired");

    clock.now = 1_000_000;
    const second = newApprovalId();
    await store.create(pending(second));
    assert.ok((await store.answer(second, true, "cli:root")).ok);
    clock.now = 1_060_001;
    const stale = await store.consume(second, BINDING);
    assert.deepEqual([stale.ok, !stale.ok && stale.state], [false, "expired"]);
    assert.equal((await store.get(second))?.state, "expired");
  });
});

Deno.test("a denied approval is never usable, and ids that are not record names are unknown", async () => {
  await withStore(async (store) => {
    const id = newApprovalId();
    await store.create(pending(id));
    assert.ok((await store.answer(id, false, "cli:root")).ok);
    const use = await store.consume(id, BINDING);
    assert.deepEqual([use.ok, !use.ok && use.state], [false, "denied"]);
    const odd = await store.answer("../jobs/x", true, "cli:root");
    assert.deepEqual([odd.ok, !odd.ok && odd.state], [false, "missing"]);
  });
});

Deno.test("attachJob() names one job per approval, only for its binding and while open", async () => {
  await withStore(async (store, clock) => {
    const id = newApprovalId();
    await store.create(pending(id));
    const foreign = await store.attachJob(id, "job_x", { ...BINDING, owner: "client:other" });
    assert.deepEqual([foreign.ok, !foreign.ok && foreign.state], [false, "missing"]);
    assert.ok((await store.attachJob(id, "job_a", BINDING)).ok);
    const second = await store.attachJob(id, "job_b", BINDING);
    assert.equal(second.ok, false, "a second identical call does not take the approval over");
    assert.equal(second.record?.job_id, "job_a");
    assert.equal((await store.get(id))?.job_id, "job_a");

    const late = newApprovalId();
    await store.create(pending(late));
    clock.now = 1_060_000;
    const expired = await store.attachJob(late, "job_c", BINDING);
    assert.deepEqual([expired.ok, !expired.ok && expired.state], [false, "expired"]);
  });
});

Deno.test("retire() ends an open approval for good: a withdrawn one can be neither answered nor used", async () => {
  await withStore(async (store) => {
    const id = newApprovalId();
    await store.create(pending(id));
    assert.ok((await store.retire(id, "withdrawn")).ok);
    const answer = await store.answer(id, true, "cli:root");
    assert.deepEqual([answer.ok, !answer.ok && answer.state], [false, "withdrawn"]);
    const use = await store.consume(id, BINDING);
    assert.deepEqual([use.ok, !use.ok && use.state], [false, "withdrawn"]);

    // An answered-and-ended approval keeps its end.
    const denied = newApprovalId();
    await store.create(pending(denied));
    await store.answer(denied, false, "cli:root");
    assert.equal((await store.retire(denied, "withdrawn")).ok, false);
    assert.equal((await store.get(denied))?.state, "denied");
  });
});
