import assert from "node:assert/strict";
import { dirname } from "node:path";
import { AuditLog, verifyAuditChain } from "../../src/audit/mod.ts";
import {
  attemptFields,
  hasTool,
  noRedaction,
  readRecords,
  runFixture,
  withTempDir,
} from "./_helpers.ts";

const SRC = new URL("../../src/", import.meta.url).pathname;
const TESTS = new URL("./", import.meta.url).pathname;
const HAS_BWRAP = hasTool("bwrap");

function collecting(mode: "closed" | "open") {
  const warnings: string[] = [];
  return {
    warnings,
    open: (path: string) =>
      AuditLog.open(path, mode, { redact: noRedaction, warn: (line) => warnings.push(line) }),
  };
}

Deno.test("open() in closed mode fails when the log's folder is missing, and creates no folder", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/missing/audit.jsonl`;
    const opened = await collecting("closed").open(path);
    assert.equal(opened.ok, false);
    assert.match(
      !opened.ok ? opened.reason : "",
      /Cannot open the audit log ".*missing\/audit\.jsonl": No such file/,
    );
    await assert.rejects(() => Deno.stat(dirname(path)), Deno.errors.NotFound);
  });
});

Deno.test("open() in closed mode fails when a directory stands where the log should be", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    await Deno.mkdir(path);
    const opened = await collecting("closed").open(path);
    assert.equal(opened.ok, false);
    assert.match(!opened.ok ? opened.reason : "", /Is a directory/);
  });
});

Deno.test("closed mode on a full disk (/dev/full): open() succeeds, writeAttempt() reports ENOSPC", async () => {
  // A subprocess: Deno asks for all access before opening a device file.
  const ran = await runFixture("write_attempt.ts", ["/dev/full", "closed", "exit"], {
    permissions: ["--allow-all"],
  });
  assert.equal(ran.code, 0, ran.stderr);
  const reported = JSON.parse(ran.stdout);
  assert.deepEqual(reported.open, { ok: true });
  assert.equal(reported.write.ok, false);
  assert.match(
    reported.write.reason,
    /^Cannot write the audit log "\/dev\/full": No space left on device/,
  );
  assert.match(ran.stderr, /the call is refused because audit_fail_mode is "closed"/);
});

Deno.test("writes fail closed once the log's folder was removed under the running server", async () => {
  await withTempDir(async (dir) => {
    const folder = `${dir}/logs`;
    await Deno.mkdir(folder);
    const { open, warnings } = collecting("closed");
    const opened = await open(`${folder}/audit.jsonl`);
    assert.ok(opened.ok);
    assert.deepEqual(await opened.log.writeAttempt(attemptFields()), { ok: true, seq: 1 });
    await Deno.remove(folder, { recursive: true });
    const written = await opened.log.writeAttempt(attemptFields());
    assert.equal(written.ok, false);
    assert.match(!written.ok ? written.reason : "", /was removed while htmcp had it open/);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /the call is refused because audit_fail_mode is "closed"/);
    await opened.log.close();
  });
});

Deno.test("open mode: an unopenable log warns, writes report not ok, and a later write recovers", async () => {
  await withTempDir(async (dir) => {
    const folder = `${dir}/later`;
    const { open, warnings } = collecting("open");
    const opened = await open(`${folder}/audit.jsonl`);
    assert.ok(opened.ok, "open mode starts the server anyway");
    assert.match(warnings[0]!, /Commands run unaudited because audit_fail_mode is "open"/);
    const unaudited = await opened.log.writeAttempt(attemptFields());
    assert.equal(unaudited.ok, false);
    assert.match(
      warnings[1]!,
      /warning: audit record not written; continuing because audit_fail_mode is "open"/,
    );
    await Deno.mkdir(folder);
    // The lost record is on record first: a records_dropped record, then the new attempt.
    assert.deepEqual(await opened.log.writeAttempt(attemptFields()), { ok: true, seq: 2 });
    await opened.log.close();
    const records = await readRecords(`${folder}/audit.jsonl`);
    assert.deepEqual(records.map((record) => record.kind), ["records_dropped", "attempt"]);
    assert.equal(records[0]!.count, 1);
  });
});

Deno.test("open mode: a failed write prints one warning line on the real stderr and reports not ok", async () => {
  const ran = await runFixture("write_attempt.ts", ["/dev/full", "open", "exit"], {
    permissions: ["--allow-all"],
  });
  assert.equal(ran.code, 0, ran.stderr);
  const reported = JSON.parse(ran.stdout);
  assert.equal(reported.write.ok, false);
  assert.match(reported.write.reason, /No space left on device/);
  const lines = ran.stderr.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 1, ran.stderr);
  assert.match(
    lines[0]!,
    /^htmcp: warning: audit record not written; continuing because audit_fail_mode is "open": Cannot write the audit log "\/dev\/full": No space left on device/,
  );
});

Deno.test("closed mode under Deno permissions without a write grant: open() fails, nothing is created", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const ran = await runFixture("write_attempt.ts", [path, "closed", "exit"], {
      permissions: [`--allow-read=${SRC},${TESTS},${dir}`],
    });
    assert.equal(ran.code, 2, ran.stderr);
    const reported = JSON.parse(ran.stdout);
    assert.equal(reported.open.ok, false);
    assert.match(reported.open.reason, /Cannot open the audit log ".*": Requires write access/);
    await assert.rejects(() => Deno.stat(path), Deno.errors.NotFound);
  });
});

Deno.test({
  name: "closed mode on a read-only filesystem: open() fails even for root",
  ignore: !HAS_BWRAP,
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = `${dir}/audit.jsonl`;
      const ran = await runFixture("write_attempt.ts", [path, "closed", "exit"], {
        permissions: ["--allow-read", "--allow-write"],
        wrapper: ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--ro-bind", dir, dir],
      });
      assert.equal(ran.code, 2, ran.stderr);
      const reported = JSON.parse(ran.stdout);
      assert.equal(reported.open.ok, false);
      assert.match(reported.open.reason, /Read-only file system/);
      await assert.rejects(() => Deno.stat(path), Deno.errors.NotFound);
    });
  },
});

Deno.test({
  name:
    "a disk that fills mid-run: the write fails, then the chain resumes intact once space is back",
  ignore: !HAS_BWRAP,
  fn: async () => {
    await withTempDir(async (dir) => {
      const small = `${dir}/small`;
      await Deno.mkdir(small);
      const ran = await runFixture("fill_disk.ts", [small], {
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
      assert.deepEqual(result.before, [{ ok: true, seq: 1 }, { ok: true, seq: 2 }]);
      assert.equal(result.whileFull.ok, false);
      assert.match(result.whileFull.reason, /No space left on device/);
      assert.equal(result.after.ok, true);
      assert.equal(result.warnings.length, 1);

      const log = logLines.join("\n").replace(/\n$/, "");
      const report = verifyAuditChain(log);
      assert.ok(report.ok, JSON.stringify(report));
      // The 6 kB record filled the log's last page before ENOSPC: a short write. Those bytes
      // stay (append-only) and a chain_reset closes them off before the next record.
      assert.equal(report.resets.length, 1);
      assert.equal(report.resets[0]!.damagedLine, 3);
      assert.ok(report.resets[0]!.damagedBytes > 0);
      assert.equal(result.after.seq, 4);
      assert.equal(report.records, 4);
    });
  },
});
