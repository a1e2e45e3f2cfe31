/**
 * `readRecentRecords` reads the log backwards: the same records a full read
 * and filter would give (across 64 KiB chunk boundaries), newest kept,
 * oldest first, a torn last line skipped, every bound honoured, and no
 * symbolic link followed.
 */
import assert from "node:assert/strict";
import { AuditLog } from "../../src/audit/mod.ts";
import { readRecentRecords } from "../../src/audit/read_recent.ts";
import { attemptFields, noRedaction, withTempDir } from "./_helpers.ts";

const ALL = { maxBytes: 1 << 30, maxScanBytes: 1 << 30, beforeSeq: null };

async function writeLog(path: string, count: number): Promise<void> {
  const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
  assert.ok(opened.ok);
  for (let i = 0; i < count; i++) {
    await opened.log.writeAttempt(
      attemptFields({
        client_id: i % 3 === 0 ? "c-three" : "c-other",
        command_raw: `echo ${i} ${"p".repeat(400)}`,
      }),
    );
  }
  await opened.log.close();
}

Deno.test("readRecentRecords() matches a full read across chunk boundaries and keeps the newest", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    await writeLog(path, 600);
    assert.ok((await Deno.stat(path)).size > 3 * 64 * 1024);
    const lines = (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "");
    const mine = lines.map((line) => JSON.parse(line)).filter((r) => r.client_id === "c-three");
    const read = await readRecentRecords(path, {
      ...ALL,
      limit: 150,
      include: (record) => record.client_id === "c-three",
    });
    assert.ok(read.ok);
    assert.deepEqual(read.value.records, mine.slice(-150));
    assert.equal(read.value.sizeLimited, false);
    assert.equal(read.value.scanLimited, false);

    const before = await readRecentRecords(path, {
      ...ALL,
      beforeSeq: 301,
      limit: 5,
      include: () => true,
    });
    assert.ok(before.ok);
    assert.deepEqual(before.value.records.map((r) => r.seq), [296, 297, 298, 299, 300]);

    const sized = await readRecentRecords(path, {
      ...ALL,
      maxBytes: 2000,
      limit: 50,
      include: () => true,
    });
    assert.ok(sized.ok);
    assert.equal(sized.value.sizeLimited, true);
    assert.deepEqual(
      sized.value.records.map((r) => r.seq),
      [599, 600],
    );
    const scanned = await readRecentRecords(path, {
      ...ALL,
      maxScanBytes: 64 * 1024,
      limit: 50,
      include: (record) => record.client_id === "nobody",
    });
    assert.ok(scanned.ok);
    assert.equal(scanned.value.scanLimited, true);
    assert.deepEqual(scanned.value.records, []);
  });
});

Deno.test("readRecentRecords() skips a torn last line and refuses a symbolic link", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    await writeLog(path, 3);
    await Deno.writeTextFile(path, '{"seq":4,"ts":"2026', { append: true });
    const read = await readRecentRecords(path, { ...ALL, limit: 10, include: () => true });
    assert.ok(read.ok);
    assert.deepEqual(read.value.records.map((r) => r.seq), [1, 2, 3]);
    await Deno.symlink(path, `${dir}/link.jsonl`);
    const linked = await readRecentRecords(`${dir}/link.jsonl`, {
      ...ALL,
      limit: 10,
      include: () => true,
    });
    assert.equal(linked.ok, false);
    assert.match(!linked.ok ? linked.reason : "", /symbolic link; it is not read/);
  });
});
