import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { AuditLog, GENESIS_HASH, verifyAuditChain } from "../../src/audit/mod.ts";
import {
  attemptFields,
  explainFields,
  noRedaction,
  outcomeFields,
  readLines,
  readRecords,
  withTempDir,
} from "./_helpers.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const ENVELOPE = ["seq", "ts", "prev", "kind", "writer"];

async function openLog(path: string, redact = noRedaction): Promise<AuditLog> {
  const opened = await AuditLog.open(path, "closed", { redact });
  if (!opened.ok) throw new Error(opened.reason);
  return opened.log;
}

Deno.test("writeAttempt() resolves only once the record is in the file", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    const fields = attemptFields();
    const seenOnResolve = await log.writeAttempt(fields).then((result) => {
      // Read synchronously by path, in the same tick the write resolved.
      const lines = Deno.readTextFileSync(path).split("\n").filter((line) => line !== "");
      return { result, last: JSON.parse(lines.at(-1)!) };
    });
    assert.deepEqual(seenOnResolve.result, { ok: true, seq: 1 });
    assert.equal(seenOnResolve.last.kind, "attempt");
    assert.equal(seenOnResolve.last.call_id, fields.call_id);
    await log.close();
  });
});

Deno.test("writeOutcome() resolves once the record is in the file, and the next append chains after it", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    await log.writeAttempt(attemptFields());
    // The outcome is answered before its fdatasync, never before its write:
    // a reader by path sees it in the same tick.
    const seen = await log.writeOutcome(outcomeFields()).then((result) => {
      const lines = Deno.readTextFileSync(path).split("\n").filter((line) => line !== "");
      return { result, last: JSON.parse(lines.at(-1)!) };
    });
    assert.deepEqual(seen.result, { ok: true, seq: 2 });
    assert.equal(seen.last.kind, "outcome");
    // The next append chains after it (and its fdatasync covers both).
    assert.deepEqual(await log.writeAttempt(attemptFields()), { ok: true, seq: 3 });
    await log.close();
    const report = verifyAuditChain(await Deno.readTextFile(path));
    assert.ok(report.ok, JSON.stringify(report));
    assert.equal(report.records, 3);
  });
});

Deno.test("a new log is created with mode 0600 and starts at seq 1 with the genesis hash", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    await log.writeAttempt(attemptFields());
    await log.close();
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const [first] = await readRecords(path);
    assert.equal(first!.seq, 1);
    assert.equal(first!.prev, GENESIS_HASH);
    assert.equal(GENESIS_HASH, "0".repeat(64));
  });
});

Deno.test("each record kind has the envelope then exactly its own fields, in order", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    await log.writeAttempt(attemptFields());
    await log.writeOutcome(outcomeFields());
    await log.writeExplain(explainFields());
    await log.writeEvent("http_rejected", {
      method: "POST",
      path: "/mcp",
      declared_bytes: 9_000_000,
      observed_bytes: null,
      limit: 1_048_576,
      status: 413,
    });
    await log.writeEvent("bearer_invalid", {
      reason: "expired",
      client_id: "client-1",
      remote_addr: "127.0.0.1",
    });
    await log.close();
    const records = await readRecords(path);
    assert.deepEqual(records.map((record) => Object.keys(record)), [
      [
        ...ENVELOPE,
        "call_id",
        "tool",
        "client_id",
        "command_raw",
        "argv",
        "cwd",
        "verdict",
        "code",
        "reason",
      ],
      [
        ...ENVELOPE,
        "call_id",
        "tool",
        "client_id",
        "code",
        "exit_code",
        "duration_ms",
        "stdout_bytes",
        "stderr_bytes",
        "truncated",
      ],
      [
        ...ENVELOPE,
        "call_id",
        "tool",
        "client_id",
        "command_raw",
        "argv",
        "verdict",
        "code",
        "reason",
      ],
      [
        ...ENVELOPE,
        "event",
        "method",
        "path",
        "declared_bytes",
        "observed_bytes",
        "limit",
        "status",
      ],
      [...ENVELOPE, "event", "reason", "client_id", "remote_addr"],
    ]);
    assert.deepEqual(records.map((record) => record.kind), [
      "attempt",
      "outcome",
      "explain",
      "event",
      "event",
    ]);
    const lines = await readLines(path);
    records.forEach((record, index) => {
      assert.equal(record.seq, index + 1);
      assert.equal(new Date(record.ts as string).toISOString(), record.ts);
      assert.equal(record.prev, index === 0 ? GENESIS_HASH : sha256(lines[index - 1]!));
    });
    assert.deepEqual(records[3]!.declared_bytes, 9_000_000);
    assert.equal(records[3]!.observed_bytes, null);
  });
});

Deno.test("no record carries output content, even when the caller passes it", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    // A whole CommandResult spread into the outcome by mistake.
    const careless = {
      ...outcomeFields(),
      stdout: "OUTPUT-CANARY-1",
      stderr: "OUTPUT-CANARY-2",
      policy_reason: "x",
    } as unknown as Parameters<AuditLog["writeOutcome"]>[0];
    await log.writeOutcome(careless);
    await log.writeAttempt({ ...attemptFields(), stdout: "OUTPUT-CANARY-3" } as never);
    await log.close();
    const text = await Deno.readTextFile(path);
    assert.doesNotMatch(text, /OUTPUT-CANARY/);
    for (const record of await readRecords(path)) {
      for (const key of ["stdout", "stderr", "output", "body", "policy_reason"]) {
        assert.equal(key in record, false, `record ${record.seq} has "${key}"`);
      }
    }
  });
});

Deno.test("writeEvent() refuses fields that would carry content, credentials or envelope keys", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    const bad: ReadonlyArray<Record<string, unknown>> = [
      { reason: "x", client_id: null, remote_addr: null, token: "eyJ..." },
      { reason: "x", client_id: null, remote_addr: null, body: "{}" },
      { reason: "x", client_id: null, remote_addr: null, stdout: "out" },
      { reason: "x", client_id: null, remote_addr: null, pin: "12345678" },
      { reason: "x", client_id: null, remote_addr: null, seq: 99 },
      { reason: "x", client_id: null, remote_addr: null, prev: GENESIS_HASH },
      { reason: "x", client_id: null, remote_addr: null, nested: { a: 1 } },
      { reason: "x", client_id: null, remote_addr: null, ratio: Number.NaN },
    ];
    for (const fields of bad) {
      assert.throws(() => log.writeEvent("bearer_invalid", fields as never), TypeError);
    }
    assert.throws(
      () => log.writeEvent("Server Start" as never, {} as never),
      TypeError,
    );
    await log.close();
    assert.equal(await Deno.readTextFile(path), "");
  });
});

Deno.test("the log redacts command_raw, argv, cwd and reason itself", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const secret = "AKIAIOSFODNN7EXAMPLE";
    const redact = (text: string) => text.replaceAll(secret, "[REDACTED:aws_access_key_id]");
    const log = await openLog(path, redact);
    await log.writeAttempt(attemptFields({
      command_raw: `aws --key ${secret} s3 ls`,
      argv: ["aws", "--key", secret, "s3", "ls"],
      cwd: `/srv/jail/${secret}`,
      verdict: "deny",
      code: "POLICY_DENIED",
      reason: `Cannot run "aws --key ${secret}": it is not allowlisted.`,
    }));
    await log.writeExplain(explainFields({
      command_raw: `echo ${secret}`,
      argv: ["echo", secret],
      reason: `Would run "echo ${secret}".`,
    }));
    await log.close();
    const text = await Deno.readTextFile(path);
    assert.equal(text.includes(secret), false);
    const [attempt, explain] = await readRecords(path);
    assert.equal(attempt!.command_raw, "aws --key [REDACTED:aws_access_key_id] s3 ls");
    assert.deepEqual(attempt!.argv, ["aws", "--key", "[REDACTED:aws_access_key_id]", "s3", "ls"]);
    assert.equal(attempt!.cwd, "/srv/jail/[REDACTED:aws_access_key_id]");
    assert.equal(
      attempt!.reason,
      'Cannot run "aws --key [REDACTED:aws_access_key_id]": it is not allowlisted.',
    );
    assert.deepEqual(explain!.argv, ["echo", "[REDACTED:aws_access_key_id]"]);
  });
});

Deno.test("event strings are redacted, identifier fields are kept as they are", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const redact = (text: string) => text.replace(/ghp_[A-Za-z0-9]+/g, "[REDACTED:github_token]");
    const log = await openLog(path, redact);
    await log.writeEvent("internal_error", {
      call_id: "ghp_notASecretButAnId",
      where: "run_command",
      message: "failed with token ghp_abcdef123456",
    });
    await log.writeEvent("client_registered", {
      client_id: "ghp_lookalikeClientId",
      client_name: "ghp_abc",
      redirect_uris: ["http://127.0.0.1/cb?t=ghp_zzz"],
    });
    await log.close();
    const [error, registered] = await readRecords(path);
    assert.equal(error!.call_id, "ghp_notASecretButAnId");
    assert.equal(error!.message, "failed with token [REDACTED:github_token]");
    assert.equal(registered!.client_id, "ghp_lookalikeClientId");
    assert.equal(registered!.client_name, "[REDACTED:github_token]");
    assert.deepEqual(registered!.redirect_uris, ["http://127.0.0.1/cb?t=[REDACTED:github_token]"]);
  });
});

Deno.test("lines are printable ASCII: escapes, bidi overrides and non-ASCII text are \\u-escaped", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    const tricky = "cat \u001b[2J\u202egnp.exe\r\nfake line \u00e9\u{1F600}\u2028";
    await log.writeAttempt(attemptFields({ command_raw: tricky, argv: [tricky] }));
    await log.close();
    const bytes = await Deno.readFile(path);
    for (const byte of bytes.subarray(0, -1)) {
      assert.ok(byte >= 0x20 && byte <= 0x7e, `byte ${byte}`);
    }
    assert.equal(bytes.at(-1), 0x0a);
    const [record] = await readRecords(path);
    assert.equal(record!.command_raw, tricky);
    assert.equal((await readLines(path)).length, 1);
  });
});

Deno.test("200 concurrent writes give 200 complete lines, distinct seqs and a valid chain", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    const writes = Array.from(
      { length: 200 },
      (_, index) =>
        index % 2 === 0
          ? log.writeAttempt(attemptFields({ command_raw: `echo ${"y".repeat(index * 40)}` }))
          : log.writeOutcome(outcomeFields({ stdout_bytes: index })),
    );
    const results = await Promise.all(writes);
    await log.close();
    const seqs = results.map((result) => (result.ok ? result.seq : -1));
    assert.deepEqual([...seqs].sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => i + 1));
    const lines = await readLines(path);
    assert.equal(lines.length, 200);
    for (const line of lines) JSON.parse(line);
    const report = verifyAuditChain(await Deno.readTextFile(path));
    assert.deepEqual(report.ok && report.records, 200);
  });
});

Deno.test("a reopened log continues the chain from its last record", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const first = await openLog(path);
    for (let i = 0; i < 3; i++) await first.writeAttempt(attemptFields());
    await first.close();
    const second = await openLog(path);
    assert.deepEqual(await second.writeOutcome(outcomeFields()), { ok: true, seq: 4 });
    await second.close();
    const lines = await readLines(path);
    assert.equal(JSON.parse(lines[3]!).prev, sha256(lines[2]!));
    const report = verifyAuditChain(await Deno.readTextFile(path));
    assert.equal(report.ok && report.records, 4);
  });
});

Deno.test("a reopened log whose last record is longer than one read chunk still continues", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const first = await openLog(path);
    await first.writeAttempt(attemptFields());
    await first.writeAttempt(attemptFields({ command_raw: "z".repeat(200_000) }));
    await first.close();
    const second = await openLog(path);
    assert.deepEqual(await second.writeAttempt(attemptFields()), { ok: true, seq: 3 });
    await second.close();
    assert.equal(verifyAuditChain(await Deno.readFile(path)).ok, true);
  });
});

Deno.test("two writers on the same log interleave into one chain, each record naming its writer", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const first = await openLog(path);
    const second = await openLog(path);
    assert.notEqual(first.writer, second.writer);
    const written = await Promise.all(
      Array.from(
        { length: 40 },
        (_, index) => (index % 2 === 0 ? first : second).writeAttempt(attemptFields()),
      ),
    );
    assert.ok(written.every((result) => result.ok));
    assert.deepEqual(
      written.map((result) => result.ok && result.seq).sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 40 }, (_, index) => index + 1),
    );
    await first.close();
    await second.close();
    const records = await readRecords(path);
    assert.equal(records.filter((record) => record.writer === first.writer).length, 20);
    assert.equal(records.filter((record) => record.writer === second.writer).length, 20);
    const report = verifyAuditChain(await Deno.readTextFile(path));
    assert.ok(report.ok && report.records === 40, JSON.stringify(report));
  });
});

Deno.test("open() refuses to append to a file that is not an htmcp audit log", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/notes.txt`;
    await Deno.writeTextFile(path, "root:x:0:0:root:/root:/bin/bash\nsecond line\n");
    for (const mode of ["closed", "open"] as const) {
      const warnings: string[] = [];
      const opened = await AuditLog.open(path, mode, {
        redact: noRedaction,
        warn: (line) => warnings.push(line),
      });
      if (mode === "closed") {
        assert.equal(opened.ok, false);
        assert.match(!opened.ok ? opened.reason : "", /does not end with an htmcp audit record/);
      } else {
        assert.ok(opened.ok);
        const written = await opened.log.writeAttempt(attemptFields());
        assert.equal(written.ok, false);
        await opened.log.close();
      }
    }
    assert.equal(await Deno.readTextFile(path), "root:x:0:0:root:/root:/bin/bash\nsecond line\n");
  });
});

Deno.test("records appended by another process are chained to, not overwritten", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const log = await openLog(path);
    await log.writeAttempt(attemptFields());
    // Bypasses the advisory lock, as a careless `echo >>` would.
    await Deno.writeTextFile(path, '{"seq":2,"ts":"2026-01-01T00:00:00.000Z"', { append: true });
    assert.deepEqual(await log.writeOutcome(outcomeFields()), { ok: true, seq: 3 });
    await log.close();
    const report = verifyAuditChain(await Deno.readTextFile(path));
    assert.ok(report.ok);
    assert.deepEqual(report.resets.map((reset) => reset.damagedLine), [2]);
  });
});

Deno.test("writes after close() report not ok and change nothing", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const warnings: string[] = [];
    const opened = await AuditLog.open(path, "closed", {
      redact: noRedaction,
      warn: (line) => warnings.push(line),
    });
    assert.ok(opened.ok);
    const pending = opened.log.writeAttempt(attemptFields());
    await opened.log.close();
    assert.deepEqual(await pending, { ok: true, seq: 1 });
    const late = await opened.log.writeAttempt(attemptFields());
    assert.equal(late.ok, false);
    assert.equal(warnings.length, 1);
    assert.equal((await readLines(path)).length, 1);
  });
});

Deno.test("AuditLog.open() throws on a missing redact function or an unknown fail mode", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      () => AuditLog.open(`${dir}/a.jsonl`, "closed", {} as never),
      TypeError,
    );
    await assert.rejects(
      () => AuditLog.open(`${dir}/a.jsonl`, "maybe" as never, { redact: noRedaction }),
      TypeError,
    );
  });
});

Deno.test("open() warns when an existing log is readable by other users", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    await Deno.writeTextFile(path, "", { mode: 0o644 });
    await Deno.chmod(path, 0o644);
    const warnings: string[] = [];
    const opened = await AuditLog.open(path, "closed", {
      redact: noRedaction,
      warn: (line) => warnings.push(line),
    });
    assert.ok(opened.ok);
    await opened.log.close();
    assert.deepEqual(warnings, [
      `htmcp: warning: the audit log "${path}" has mode 0644; htmcp creates it 0600. Run: chmod 600 "${path}"`,
    ]);
  });
});
