/**
 * The writer trusts nothing on disk: a log truncated, renamed over, or
 * hard-linked away and replaced under a running writer, or a symlink planted
 * at its path, never gets a silent new chain at seq 1.
 */
import assert from "node:assert/strict";
import { AuditLog, runAuditVerify, verifyAuditChain } from "../../src/audit/mod.ts";
import type { AuditFailMode } from "../../src/audit/mod.ts";
import { attemptFields, noRedaction, outcomeFields, readRecords, withTempDir } from "./_helpers.ts";

async function openLog(path: string, mode: AuditFailMode, warnings: string[] = []) {
  const opened = await AuditLog.open(path, mode, {
    redact: noRedaction,
    warn: (line) => warnings.push(line),
  });
  if (!opened.ok) throw new Error(opened.reason);
  return opened.log;
}

async function writeThree(log: AuditLog): Promise<void> {
  for (let i = 0; i < 3; i++) assert.equal((await log.writeAttempt(attemptFields())).ok, true);
}

async function verifyPrinted(paths: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runAuditVerify(paths, (line) => lines.push(line));
  return { code, lines };
}

Deno.test("closed mode: a truncated log refuses every write until SIGHUP's reopen, then marks the cut", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path, "closed");
    await writeThree(log);
    const headBefore = verifyAuditChain(await Deno.readFile(path));
    assert.ok(headBefore.ok);
    await Deno.truncate(path, 0);

    const refused = await log.writeAttempt(attemptFields());
    assert.equal(refused.ok, false);
    assert.match(!refused.ok ? refused.reason : "", /was truncated while htmcp had it open/);
    // Still refused: the writer does not forget what it saw.
    assert.equal((await log.writeAttempt(attemptFields())).ok, false);
    assert.equal((await Deno.stat(path)).size, 0, "nothing was written to the truncated file");

    assert.deepEqual(await log.reopen(), { ok: true, seq: 4 });
    assert.deepEqual(await log.writeAttempt(attemptFields()), { ok: true, seq: 5 });
    await log.close();
    const records = await readRecords(path);
    assert.equal(records[0]!.kind, "segment");
    assert.equal(records[0]!.found, "file_truncated");
    assert.equal(records[0]!.previous_seq, 3);
    assert.equal(records[0]!.previous_sha256, headBefore.head);
    assert.equal(records[0]!.seq, 4, "never a new chain at seq 1");
    const verified = await verifyPrinted([path]);
    assert.equal(verified.code, 3);
    assert.match(
      verified.lines[0]!,
      /replaced or truncated: line 1 \(file_truncated; the writer knew up to seq 3/,
    );
  });
});

Deno.test("open mode: a log truncated to a shorter length is marked at once and chained to what remains", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path, "open");
    await writeThree(log);
    const lines = (await Deno.readTextFile(path)).split("\n");
    // Cut the last record off, as someone hiding it would.
    await Deno.truncate(path, lines[0]!.length + 1 + lines[1]!.length + 1);
    assert.deepEqual(await log.writeAttempt(attemptFields()), { ok: true, seq: 4 });
    await log.close();
    const records = await readRecords(path);
    assert.deepEqual(records.map((record) => record.kind), [
      "attempt",
      "attempt",
      "segment",
      "attempt",
    ]);
    assert.equal(records[2]!.found, "file_truncated");
    assert.equal(records[2]!.previous_seq, 3, "the cut-off record's seq is on record");
    const report = verifyAuditChain(await Deno.readFile(path));
    assert.ok(report.ok && report.segments.length === 1, JSON.stringify(report));
  });
});

Deno.test("closed mode: a SIGHUP that arrives while an append is finishing is not used up by it: the next check accepts the cut", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path, "closed");
    await writeThree(log);
    // An outcome is answered once written: the append is still in flight
    // (it checked the file before the cut, and has not ended) when
    // copytruncate cuts the file and its postrotate sends SIGHUP.
    assert.equal((await log.writeOutcome(outcomeFields())).ok, true);
    // Synchronous, so all three happen before that append ends.
    Deno.copyFileSync(path, `${path}.1`);
    Deno.truncateSync(path, 0);
    const reopened = log.reopen();
    assert.deepEqual(await reopened, { ok: true, seq: 5 });
    // Accepted, and said: the next call is recorded after a segment record.
    assert.deepEqual(await log.writeAttempt(attemptFields()), { ok: true, seq: 6 });
    await log.close();
    const records = await readRecords(path);
    assert.deepEqual(records.map((r) => r.kind), ["segment", "attempt"]);
    assert.equal(records[0]!.found, "file_truncated");
    assert.equal(records[0]!.previous_seq, 4);
    // Seq 4 went with the copy: it was written before the cut, not displaced by it.
    assert.equal(records[0]!.first_displaced_seq, null);
    // The rotated copy and the live file verify as one series, the cut on record.
    const series = await verifyPrinted([`${path}.1`, path]);
    assert.equal(series.code, 3, series.lines.join("\n"));
    assert.match(series.lines.join("\n"), /linked end to end/);
  });
});

for (const how of ["renamed over", "hard-linked away and replaced"] as const) {
  Deno.test(`closed mode: a log ${how} stops writes; after reopen the found file is marked`, async () => {
    await withTempDir(async (dir) => {
      const path = `${dir}/audit.jsonl`;
      const log = await openLog(path, "closed");
      await writeThree(log);
      const original = await Deno.readFile(path);
      // A forged log: a valid chain of one record, written by another writer.
      const forger = await openLog(`${dir}/forged.jsonl`, "closed");
      await forger.writeAttempt(attemptFields({ command_raw: "true" }));
      await forger.close();
      if (how === "hard-linked away and replaced") await Deno.link(path, `${dir}/kept.jsonl`);
      await Deno.rename(`${dir}/forged.jsonl`, path);

      const refused = await log.writeAttempt(attemptFields());
      assert.equal(refused.ok, false);
      assert.match(!refused.ok ? refused.reason : "", /was replaced by another file/);
      assert.equal((await readRecords(path)).length, 1, "the forged file was not appended to");

      assert.equal((await log.reopen()).ok, true);
      assert.equal((await log.writeAttempt(attemptFields())).ok, true);
      await log.close();
      const records = await readRecords(path);
      assert.equal(records[1]!.kind, "segment");
      assert.equal(records[1]!.found, "file_replaced");
      assert.equal(records[1]!.previous_seq, 3);
      const originalReport = verifyAuditChain(original);
      assert.equal(records[1]!.previous_sha256, originalReport.ok ? originalReport.head : null);
      if (how === "hard-linked away and replaced") {
        assert.deepEqual(await Deno.readFile(`${dir}/kept.jsonl`), original, "old file untouched");
      }
      assert.equal((await verifyPrinted([path])).code, 3);
    });
  });
}

Deno.test("open mode: a replaced log is marked at the first write, with the last known head", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path, "open");
    await writeThree(log);
    await Deno.writeTextFile(`${dir}/other.jsonl`, "");
    const forger = await openLog(`${dir}/other.jsonl`, "closed");
    await forger.writeAttempt(attemptFields());
    await forger.close();
    await Deno.rename(`${dir}/other.jsonl`, path);
    assert.deepEqual(await log.writeAttempt(attemptFields()), { ok: true, seq: 3 });
    await log.close();
    const records = await readRecords(path);
    assert.deepEqual(records.map((record) => [record.kind, record.found ?? null]), [
      ["attempt", null],
      ["segment", "file_replaced"],
      ["attempt", null],
    ]);
    assert.equal(records[1]!.previous_seq, 3);
  });
});

Deno.test("a symlink at the log's path is never followed: open fails and the target stays untouched", async () => {
  await withTempDir(async (dir) => {
    const target = `${dir}/elsewhere.txt`;
    await Deno.writeTextFile(target, "canary\n");
    const path = `${dir}/audit.jsonl`;
    await Deno.symlink(target, path);
    for (const mode of ["closed", "open"] as const) {
      const opened = await AuditLog.open(path, mode, { redact: noRedaction, warn: () => {} });
      if (mode === "closed") {
        assert.equal(opened.ok, false);
        assert.match(!opened.ok ? opened.reason : "", /is a symbolic link/);
      } else {
        assert.ok(opened.ok);
        assert.equal((await opened.log.writeAttempt(attemptFields())).ok, false);
        await opened.log.close();
      }
    }
    // A dangling link is not followed to create its target either.
    await Deno.remove(target);
    const dangling = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.equal(dangling.ok, false);
    await assert.rejects(() => Deno.lstat(target), Deno.errors.NotFound);
  });
});

Deno.test("a symlink swapped in under a running writer stops its writes; nothing reaches the target", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const target = `${dir}/target.txt`;
    await Deno.writeTextFile(target, "canary\n");
    const log = await openLog(path, "closed");
    await writeThree(log);
    await Deno.rename(path, `${dir}/moved.jsonl`);
    await Deno.symlink(target, path);
    const refused = await log.writeAttempt(attemptFields());
    assert.equal(refused.ok, false);
    assert.match(!refused.ok ? refused.reason : "", /replaced by a symbolic link/);
    await log.close();
    assert.equal(await Deno.readTextFile(target), "canary\n");
  });
});

Deno.test("rotation by rename then create (logrotate create): no write fails, the new file names the old head", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path, "closed");
    await writeThree(log);
    await Deno.rename(path, `${path}.1`);
    await Deno.writeTextFile(path, "", { mode: 0o600 });
    assert.deepEqual(await log.writeAttempt(attemptFields()), { ok: true, seq: 5 });
    await log.close();
    const records = await readRecords(path);
    assert.equal(records[0]!.kind, "segment");
    assert.equal(records[0]!.found, "new_empty_file");
    assert.equal((await readRecords(`${path}.1`)).length, 3, "nothing more went to the old file");
    const verified = await verifyPrinted([`${path}.1`, path]);
    assert.equal(verified.code, 0, verified.lines.join("\n"));
    assert.match(verified.lines.at(-1)!, /series of 2 files is linked end to end/);
  });
});

Deno.test("rotation by rename alone, then SIGHUP's reopen: the writer creates the new file at once", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path, "closed");
    await writeThree(log);
    await Deno.rename(path, `${path}.1`);
    assert.deepEqual(await log.reopen(), { ok: true, seq: 4 });
    const info = await Deno.stat(path);
    assert.equal(info.mode! & 0o777, 0o600);
    await log.close();
    const [segment] = await readRecords(path);
    assert.equal(segment!.found, "path_missing");
    assert.equal((await verifyPrinted([`${path}.1`, path])).code, 0);
  });
});

Deno.test("verify of a series: a later file that starts a new chain, or names another head, is BROKEN", async () => {
  await withTempDir(async (dir) => {
    const first = `${dir}/a.jsonl`;
    const second = `${dir}/b.jsonl`;
    for (const path of [first, second]) {
      const log = await openLog(path, "closed");
      await writeThree(log);
      await log.close();
    }
    const unlinked = await verifyPrinted([first, second]);
    assert.equal(unlinked.code, 1);
    assert.match(unlinked.lines.at(-1)!, /starts a new chain instead of continuing/);

    // Rotate the second file, then verify it after the wrong predecessor.
    const log = await openLog(second, "closed");
    await Deno.rename(second, `${dir}/b.1.jsonl`);
    await log.writeAttempt(attemptFields());
    await log.close();
    const wrong = await verifyPrinted([first, second]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.lines.at(-1)!, /which is not the head of/);
    assert.equal((await verifyPrinted([`${dir}/b.1.jsonl`, second])).code, 0);
  });
});

Deno.test("closed mode: a deleted log stops writes until SIGHUP's reopen; open mode starts a marked file at once", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const closed = await openLog(path, "closed");
    await writeThree(closed);
    await Deno.remove(path);
    const refused = await closed.writeAttempt(attemptFields());
    assert.match(!refused.ok ? refused.reason : "", /was removed while htmcp had it open/);
    await assert.rejects(() => Deno.lstat(path), Deno.errors.NotFound, "no file was created");
    assert.deepEqual(await closed.reopen(), { ok: true, seq: 4 });
    await closed.close();
    const [segment] = await readRecords(path);
    assert.equal(segment!.found, "file_removed");
    assert.equal(segment!.previous_seq, 3);
    assert.equal((await verifyPrinted([path])).code, 3, "a removed log is reported");

    const open = await openLog(path, "open");
    await Deno.remove(path);
    assert.deepEqual(await open.writeAttempt(attemptFields()), { ok: true, seq: 6 });
    await open.close();
    const records = await readRecords(path);
    assert.deepEqual(records.map((record) => record.found ?? record.kind), [
      "file_removed",
      "attempt",
    ]);
  });
});
