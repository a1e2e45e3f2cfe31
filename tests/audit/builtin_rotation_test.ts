/**
 * Built-in rotation (`[audit] rotate_bytes`, `rotate_daily`): the full log is
 * renamed with its last seq and hash, the next file's first record names it,
 * and the series verifies as one chain, with several writers too.
 */
import assert from "node:assert/strict";
import { AuditLog, runAuditVerify } from "../../src/audit/mod.ts";
import { buildEvent } from "../../src/audit/build.ts";
import { linkBatch } from "../../src/audit/chain.ts";
import { GENESIS_HASH } from "../../src/audit/records.ts";
import { buildPermissionSet } from "../../src/permissions/mod.ts";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "../config/_fixture.ts";
import { attemptFields, noRedaction, readRecords, withTempDir } from "./_helpers.ts";
import { startHarness } from "../_helpers/stdio_harness.ts";

async function series(dir: string): Promise<string[]> {
  const rotated = (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name)
    .filter((name) => name.startsWith("audit.jsonl.")).sort();
  return [...rotated.map((name) => `${dir}/${name}`), `${dir}/audit.jsonl`];
}

Deno.test("rotate_bytes: two writers fill several files; names sort in chain order and the series verifies", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const open = async () => {
      const opened = await AuditLog.open(path, "closed", {
        redact: noRedaction,
        rotation: { bytes: 4096, daily: false },
      });
      if (!opened.ok) throw new Error(opened.reason);
      return opened.log;
    };
    const writers = [await open(), await open()];
    const commands = Array.from({ length: 120 }, (_, i) => `echo rotated-${i}`);
    // Two at a time, one per writer, so appends interleave across rotations.
    const written = [];
    for (let i = 0; i < commands.length; i += 2) {
      written.push(
        ...await Promise.all(
          [0, 1].map((w) =>
            writers[w]!.writeAttempt(attemptFields({ command_raw: commands[i + w]! }))
          ),
        ),
      );
    }
    assert.ok(written.every((result) => result.ok));
    for (const writer of writers) await writer.close();

    const files = await series(dir);
    assert.ok(files.length >= 4, files.join(" "));
    const seen: string[] = [];
    for (const [index, file] of files.entries()) {
      const records = await readRecords(file);
      seen.push(
        ...records.flatMap((record) =>
          record.kind === "attempt" ? [String(record.command_raw)] : []
        ),
      );
      if (index === 0) continue;
      assert.equal(records[0]!.kind, "segment");
      assert.equal(records[0]!.found, "rotated");
      assert.equal(records[0]!.previous_file, files[index - 1]!.split("/").at(-1));
      // The name carries the last seq of the file it names.
      const named = Number(files[index - 1]!.split(".").at(-1)!.split("-")[0]);
      assert.equal(records[0]!.previous_seq, named);
    }
    assert.deepEqual(seen.sort(), [...commands].sort(), "every record once, none twice");
    const printed: string[] = [];
    assert.equal(await runAuditVerify(files, (line) => printed.push(line)), 0, printed.join("\n"));
    assert.match(printed.at(-1)!, /linked end to end/);
  });
});

Deno.test("rotate_daily: a log whose first record is from yesterday is rotated before today's first record", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    const batch = linkBatch(
      { lastSeq: 0, lastHash: GENESIS_HASH, damage: null, size: 0 },
      [buildEvent("server_stop", { reason: "yesterday" }, noRedaction)],
      { writer: "0123456789abcdef", ts: yesterday, lead: [] },
    );
    await Deno.writeFile(path, batch.bytes, { mode: 0o600 });
    const opened = await AuditLog.open(path, "closed", {
      redact: noRedaction,
      rotation: { bytes: null, daily: true },
    });
    assert.ok(opened.ok);
    assert.deepEqual(await opened.log.writeAttempt(attemptFields()), { ok: true, seq: 3 });
    assert.deepEqual(await opened.log.writeAttempt(attemptFields()), { ok: true, seq: 4 });
    await opened.log.close();
    const files = await series(dir);
    assert.equal(files.length, 2, "rotated once, not again for today's records");
    assert.equal((await readRecords(files[0]!)).length, 1);
    const [segment] = await readRecords(path);
    assert.equal(segment!.found, "rotated");
    assert.equal(await runAuditVerify(files, () => {}), 0);
  });
});

Deno.test("[audit] rotate_bytes below 1024 is a startup error; rotation grants write on the log's folder only when on", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(`${MINIMAL}[audit]\nrotate_bytes = 100\n`),
      'Policy key "audit.rotate_bytes" must be an integer from 1024 to 1099511627776, got 100.',
    );
    await s.write("logs/.keep", "");
    const logLine = 'audit_log = "logs/audit.jsonl"\n';
    const off = assertLoaded(await s.load(MINIMAL + logLine));
    const on = assertLoaded(await s.load(`${MINIMAL}${logLine}[audit]\nrotate_daily = true\n`));
    assert.deepEqual(on.auditRotation, { bytes: null, daily: true });
    const folder = `${s.dir}/logs`;
    const grants = async (policy: typeof on) => {
      const built = await buildPermissionSet(policy);
      if (!built.ok) throw new Error(built.reason);
      return built.set.write.map((grant) => grant.value);
    };
    assert.ok(!(await grants(off)).includes(folder));
    assert.ok((await grants(on)).includes(folder));
    // A log whose folder also holds the jail cannot rotate: write on that
    // folder would reach into the jail, and the permission set refuses it.
    const beside = assertLoaded(await s.load(`${MINIMAL}[audit]\nrotate_bytes = 4096\n`));
    const refused = await buildPermissionSet(beside);
    assert.equal(refused.ok, false);
    assert.match(!refused.ok ? refused.reason : "", /overlaps the jail root/);
  });
});

Deno.test("a real stdio server with [audit] rotate_bytes rotates under its permission set; every call is in the series", async () => {
  await withTempDir(async (root) => {
    const logs = await Deno.realPath(root);
    const harness = await startHarness({
      allow: ["echo"],
      auditLog: `${logs}/audit.jsonl`,
      extraToml: "[audit]\nrotate_bytes = 4096\n",
    });
    try {
      for (let i = 0; i < 30; i++) {
        assert.equal((await harness.call("run_command", { command: `echo r${i}` })).code, "OK");
      }
    } finally {
      await harness.close();
    }
    const files = await series(logs);
    assert.ok(files.length >= 3, files.join(" "));
    let text = "";
    for (const file of files) text += await Deno.readTextFile(file);
    for (let i = 0; i < 30; i++) assert.ok(text.includes(`"command_raw":"echo r${i}"`), `r${i}`);
    const printed: string[] = [];
    assert.equal(await runAuditVerify(files, (line) => printed.push(line)), 0, printed.join("\n"));
  });
});
