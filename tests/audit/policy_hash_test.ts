/**
 * A log opened with the policy's identity stamps it on every record it
 * writes, right after `writer`; no caller can set
 * or spoof it, and the chain still verifies.
 */
import assert from "node:assert/strict";
import { AuditLog, verifyAuditChain } from "../../src/audit/mod.ts";
import {
  attemptFields,
  explainFields,
  noRedaction,
  outcomeFields,
  readRecords,
  withTempDir,
} from "./_helpers.ts";

const HASH = `sha256:${"ab".repeat(32)}`;

Deno.test("every record of a log opened with a policy hash carries it after writer, and the chain verifies", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction, policyHash: HASH });
    assert.ok(opened.ok);
    assert.equal(opened.log.policyHash, HASH);
    await opened.log.writeAttempt(attemptFields());
    await opened.log.writeOutcome(outcomeFields());
    await opened.log.writeExplain(explainFields());
    await opened.log.writeEvent("server_stop", { reason: "test" });
    await opened.log.close();
    const records = await readRecords(path);
    assert.deepEqual(records.map((r) => r.kind), [
      "attempt",
      "outcome",
      "explain",
      "event",
    ]);
    for (const record of records) {
      assert.deepEqual(Object.keys(record).slice(0, 6), [
        "seq",
        "ts",
        "prev",
        "kind",
        "writer",
        "policy_hash",
      ]);
      assert.equal(record.policy_hash, HASH);
    }
    const report = verifyAuditChain(await Deno.readFile(path));
    assert.equal(report.ok, true, JSON.stringify(report));
  });
});

Deno.test("an event cannot set policy_hash itself", async () => {
  await withTempDir(async (dir) => {
    const opened = await AuditLog.open(`${dir}/audit.jsonl`, "closed", {
      redact: noRedaction,
      policyHash: HASH,
    });
    assert.ok(opened.ok);
    assert.throws(
      () => opened.log.writeEvent("server_stop", { reason: "x", policy_hash: "sha256:0" } as never),
      /reserved field "policy_hash"/,
    );
    await opened.log.close();
    assert.equal((await readRecords(`${dir}/audit.jsonl`)).length, 0, "nothing was written");
  });
});

Deno.test("a log opened without a policy hash writes no policy_hash field", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.ok(opened.ok);
    assert.equal(opened.log.policyHash, null);
    await opened.log.writeAttempt(attemptFields());
    await opened.log.close();
    const [record] = await readRecords(path);
    assert.equal(Object.hasOwn(record!, "policy_hash"), false);
  });
});
