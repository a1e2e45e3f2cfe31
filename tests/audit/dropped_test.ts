/**
 * Fail-open accounting: in open mode the calls run even when their records
 * cannot be written, so the loss itself must reach the log as soon as it can.
 */
import assert from "node:assert/strict";
import { runAuditVerify, verifyAuditChain } from "../../src/audit/mod.ts";
import { hasTool, runFixture, withTempDir } from "./_helpers.ts";

Deno.test({
  name: "open mode on a full disk: lost records are counted and a records_dropped record follows",
  ignore: !hasTool("bwrap"),
  fn: async () => {
    await withTempDir(async (dir) => {
      const small = `${dir}/small`;
      await Deno.mkdir(small);
      // A real 64 kB tmpfs (bwrap's own mount namespace), really filled.
      const ran = await runFixture("fill_disk_open.ts", [small], {
        permissions: ["--allow-read", "--allow-write"],
        wrapper: [
          "bwrap",
          "--bind",
          "/",
          "/",
          "--dev",
          "/dev",
          "--size",
          "65536",
          "--tmpfs",
          small,
        ],
      });
      assert.equal(ran.code, 0, ran.stderr);
      const [summary, ...logLines] = ran.stdout.split("\n");
      const result = JSON.parse(summary!);
      assert.deepEqual(result.before, { ok: true, seq: 1 });
      for (const lost of result.whileFull) {
        assert.equal(lost.ok, false);
        assert.match(lost.reason, /No space left on device/);
      }
      assert.equal(result.after.ok, true);

      const log = logLines.join("\n").replace(/\n$/, "");
      // A short write before ENOSPC leaves a torn line (closed off by a
      // chain_reset); only whole records are parsed here.
      const records = log.split("\n").flatMap((line) => {
        try {
          return [JSON.parse(line)];
        } catch {
          return [];
        }
      });
      const dropped = records.filter((record) => record.kind === "records_dropped");
      assert.equal(dropped.length, 1);
      assert.equal(dropped[0]!.count, 5);
      assert.ok(dropped[0]!.first_ts <= dropped[0]!.last_ts);
      assert.match(dropped[0]!.reason, /No space left on device/);
      // It comes right before the first record written once space was back.
      const index = records.indexOf(dropped[0]!);
      assert.equal(records[index + 1]!.command_raw, "echo space again");
      for (const record of records) assert.ok(!String(record.command_raw).startsWith("echo lost-"));

      const report = verifyAuditChain(log);
      assert.ok(report.ok, JSON.stringify(report));
      assert.equal(report.dropped.length, 1);
      assert.equal(report.dropped[0]!.count, 5);
      const path = `${dir}/copy.jsonl`;
      await Deno.writeTextFile(path, log);
      const printed: string[] = [];
      assert.equal(await runAuditVerify(path, (line) => printed.push(line)), 3);
      assert.match(printed[0]!, /5 record\(s\) could not be written \(audit_fail_mode "open"\)/);
    });
  },
});
