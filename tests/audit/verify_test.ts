import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  AuditLog,
  ChainVerifier,
  GENESIS_HASH,
  runAuditVerify,
  VERIFY_BROKEN,
  VERIFY_INTACT,
  VERIFY_INTACT_WITH_RESETS,
  VERIFY_UNREADABLE,
  verifyAuditChain,
  type VerifyReport,
} from "../../src/audit/mod.ts";
import { attemptFields, noRedaction, outcomeFields, withTempDir } from "./_helpers.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** A real 10-record log written by AuditLog, as its lines (no final newline). */
async function goodLines(): Promise<string[]> {
  let lines: string[] = [];
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    if (!opened.ok) throw new Error(opened.reason);
    for (let i = 0; i < 5; i++) {
      const call_id = `call-${i}`;
      await opened.log.writeAttempt(attemptFields({ call_id, command_raw: `echo ${i}` }));
      await opened.log.writeOutcome(outcomeFields({ call_id, stdout_bytes: i }));
    }
    await opened.log.close();
    lines = (await Deno.readTextFile(path)).split("\n").slice(0, -1);
  });
  return lines;
}

const text = (lines: readonly string[]) => lines.map((line) => `${line}\n`).join("");

function broken(report: VerifyReport): { line: number; seq: number | null; problem: string } {
  assert.equal(report.ok, false, "the verifier accepted a tampered log");
  if (report.ok) throw new Error("unreachable");
  return report;
}

Deno.test("verifyAuditChain() accepts an untouched log and reports its head hash", async () => {
  const lines = await goodLines();
  const report = verifyAuditChain(text(lines));
  assert.deepEqual(report, {
    ok: true,
    records: 10,
    head: sha256(lines[9]!),
    lastSeq: 10,
    continues: null,
    displacedStart: null,
    resets: [],
    segments: [],
    dropped: [],
  });
});

Deno.test("verifyAuditChain() accepts an empty log", () => {
  assert.deepEqual(verifyAuditChain(""), {
    ok: true,
    records: 0,
    head: GENESIS_HASH,
    lastSeq: 0,
    continues: null,
    displacedStart: null,
    resets: [],
    segments: [],
    dropped: [],
  });
});

Deno.test("verifyAuditChain() catches an edit that keeps the JSON valid, at the next link", async () => {
  const lines = await goodLines();
  lines[3] = lines[3]!.replace('"exit_code":0', '"exit_code":1');
  assert.ok(lines[3]!.includes('"exit_code":1'));
  const report = broken(verifyAuditChain(text(lines)));
  assert.equal(report.line, 5);
  assert.equal(report.seq, 5);
  assert.match(report.problem, /prev is not the SHA-256 of line 4/);
});

Deno.test("verifyAuditChain() catches an edit that breaks a line's JSON", async () => {
  const lines = await goodLines();
  lines[6] = lines[6]!.slice(0, 40);
  const report = broken(verifyAuditChain(text(lines)));
  assert.equal(report.line, 7);
  assert.equal(report.seq, null);
  assert.match(report.problem, /not an audit record .*no chain_reset record closes it off/);
});

Deno.test("verifyAuditChain() catches a deleted record", async () => {
  const lines = await goodLines();
  lines.splice(4, 1);
  const report = broken(verifyAuditChain(text(lines)));
  assert.equal(report.line, 5);
  assert.equal(report.seq, 6);
  assert.match(
    report.problem,
    /seq is 6 but 5 was expected: a record was removed, inserted or moved/,
  );
});

Deno.test("verifyAuditChain() catches a deleted first record", async () => {
  const lines = await goodLines();
  const report = broken(verifyAuditChain(text(lines.slice(1))));
  assert.equal(report.line, 1);
  assert.match(report.problem, /does not start at the beginning of a chain/);
});

Deno.test("verifyAuditChain() catches two records swapped", async () => {
  const lines = await goodLines();
  [lines[5], lines[6]] = [lines[6]!, lines[5]!];
  const report = broken(verifyAuditChain(text(lines)));
  assert.equal(report.line, 6);
  assert.equal(report.seq, 7);
});

Deno.test("verifyAuditChain() catches an inserted copy of a record", async () => {
  const lines = await goodLines();
  lines.splice(8, 0, lines[2]!);
  const report = broken(verifyAuditChain(text(lines)));
  assert.equal(report.line, 9);
  assert.equal(report.seq, 3);
});

Deno.test("verifyAuditChain() catches a forged record inserted with the right seq and prev", async () => {
  const lines = await goodLines();
  const forged = JSON.stringify({
    seq: 5,
    ts: new Date().toISOString(),
    prev: sha256(lines[3]!),
    kind: "outcome",
    call_id: "forged",
  });
  lines.splice(4, 0, forged);
  const report = broken(verifyAuditChain(text(lines)));
  assert.equal(report.line, 6);
  assert.match(report.problem, /seq is 5 but 6 was expected/);
});

Deno.test("verifyAuditChain() catches records renumbered after a deletion, by their prev", async () => {
  const lines = await goodLines();
  lines.splice(4, 1);
  const renumbered = lines.map((line, index) =>
    index >= 4 ? line.replace(/^\{"seq":\d+/, `{"seq":${index + 1}`) : line
  );
  const report = broken(verifyAuditChain(text(renumbered)));
  assert.equal(report.line, 5);
  assert.match(report.problem, /prev is not the SHA-256 of line 4/);
});

Deno.test("verifyAuditChain() catches a log truncated mid-line", async () => {
  const full = text(await goodLines());
  const report = broken(verifyAuditChain(full.slice(0, full.length - 25)));
  assert.equal(report.line, 10);
  assert.equal(report.seq, null);
  assert.match(report.problem, /the last line is incomplete \(no final newline\)/);
});

Deno.test("verifyAuditChain() catches a log cut in the middle and glued together", async () => {
  const full = text(await goodLines());
  const glued = full.slice(0, 1000) + full.slice(1500);
  broken(verifyAuditChain(glued));
});

Deno.test("verifyAuditChain() refuses line-ending conversion and non-ASCII bytes htmcp never writes", async () => {
  const lines = await goodLines();
  const crlf = broken(verifyAuditChain(lines.map((line) => `${line}\r\n`).join("")));
  assert.equal(crlf.line, 1);
  assert.match(crlf.problem, /byte 0x0d/);
  lines[2] = lines[2]!.replace("echo 1", "echo \u00e9");
  assert.match(broken(verifyAuditChain(text(lines))).problem, /byte 0xc3/);
});

Deno.test("verifyAuditChain() refuses a chain_reset with no damaged bytes before it", async () => {
  const lines = await goodLines();
  const reset = JSON.stringify({
    seq: 11,
    ts: new Date().toISOString(),
    prev: sha256(lines[9]!),
    kind: "chain_reset",
    cause: "incomplete_line",
    damaged_bytes: 0,
    last_good_seq: 10,
    last_good_sha256: sha256(lines[9]!),
  });
  const report = broken(verifyAuditChain(text([...lines, reset])));
  assert.equal(report.line, 11);
  assert.match(report.problem, /no damaged bytes precede it/);
});

Deno.test("a torn last line is closed off on reopen, and verify lists it instead of hiding it", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const lines = await goodLines();
    const torn = lines[9]!.slice(0, 70);
    await Deno.writeTextFile(path, text(lines.slice(0, 9)) + torn);
    assert.match(broken(verifyAuditChain(await Deno.readTextFile(path))).problem, /incomplete/);

    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.ok(opened.ok);
    assert.deepEqual(await opened.log.writeAttempt(attemptFields()), { ok: true, seq: 11 });
    await opened.log.close();

    const after = (await Deno.readTextFile(path)).split("\n");
    assert.equal(after[9], torn, "the damaged bytes are kept, not truncated away");
    const reset = JSON.parse(after[10]!);
    assert.deepEqual(
      { kind: reset.kind, seq: reset.seq, prev: reset.prev, damaged_bytes: reset.damaged_bytes },
      { kind: "chain_reset", seq: 10, prev: sha256(torn), damaged_bytes: 70 },
    );
    assert.equal(reset.last_good_seq, 9);
    assert.equal(reset.last_good_sha256, sha256(lines[8]!));
    const report = verifyAuditChain(await Deno.readTextFile(path));
    assert.ok(report.ok);
    assert.equal(report.records, 11);
    assert.deepEqual(report.resets, [{ line: 11, seq: 10, damagedLine: 10, damagedBytes: 70 }]);

    // The reset only vouches for exactly those bytes.
    const tampered = (await Deno.readTextFile(path)).replace(torn, torn.slice(0, -1) + "X");
    const caught = broken(verifyAuditChain(tampered));
    assert.equal(caught.line, 11);
    assert.match(caught.problem, /does not match the 70 damaged bytes from line 10/);
  });
});

Deno.test("ChainVerifier gives the same verdict whatever the chunk size", async () => {
  const lines = await goodLines();
  const good = new TextEncoder().encode(text(lines));
  const bad = new TextEncoder().encode(text([...lines.slice(0, 3), ...lines.slice(4)]));
  for (const bytes of [good, bad]) {
    const whole = verifyAuditChain(bytes);
    for (const size of [1, 7, 4096]) {
      const verifier = new ChainVerifier();
      const buffer = new Uint8Array(size);
      for (let offset = 0; offset < bytes.length; offset += size) {
        // Reuses one buffer, as a stream reader may.
        const chunk = bytes.subarray(offset, offset + size);
        buffer.set(chunk);
        verifier.push(buffer.subarray(0, chunk.length));
      }
      assert.deepEqual(verifier.finish(), whole);
    }
  }
});

Deno.test("runAuditVerify() prints one verdict line and returns 0, 1, 2 or 3", async () => {
  await withTempDir(async (dir) => {
    const lines = await goodLines();
    const cases: Array<[string, string | null, number, RegExp]> = [
      [
        "good.jsonl",
        text(lines),
        VERIFY_INTACT,
        /is intact: 10 records, head sha256 [0-9a-f]{64}\.$/,
      ],
      [
        "edited.jsonl",
        text(lines.map((line, i) => (i === 2 ? line.replace("echo 1", "echo 2") : line))),
        VERIFY_BROKEN,
        /is BROKEN at line 4 \(seq 4\): prev is not the SHA-256 of line 3/,
      ],
      [
        "missing.jsonl",
        null,
        VERIFY_UNREADABLE,
        /^Cannot verify the audit log ".*missing\.jsonl": No such file/,
      ],
      [
        "torn.jsonl",
        text(lines.slice(0, 9)) + lines[9]!.slice(0, 10),
        VERIFY_INTACT_WITH_RESETS,
        /is intact with 1 chain reset\(s\) where a write was cut off: line 10 \(10 damaged bytes, chain_reset at line 11\); 11 records/,
      ],
    ];
    for (const [name, content, expected, pattern] of cases) {
      const path = `${dir}/${name}`;
      if (content !== null) await Deno.writeTextFile(path, content);
      if (name === "torn.jsonl") {
        const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
        assert.ok(opened.ok);
        await opened.log.close();
        // Opening alone writes nothing; the repair happens with the next record.
        const log = await AuditLog.open(path, "closed", { redact: noRedaction });
        assert.ok(log.ok);
        await log.log.writeEvent("server_stop", { reason: "test" });
        await log.log.close();
      }
      const printed: string[] = [];
      assert.equal(await runAuditVerify(path, (line) => printed.push(line)), expected, name);
      assert.equal(printed.length, 1);
      assert.match(printed[0]!, pattern);
    }
  });
});
