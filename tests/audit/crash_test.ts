import assert from "node:assert/strict";
import { AuditLog, verifyAuditChain } from "../../src/audit/mod.ts";
import {
  fixture,
  hasTool,
  noRedaction,
  outcomeFields,
  readRecords,
  runFixture,
  withTempDir,
} from "./_helpers.ts";

const HAS_STRACE = hasTool("strace");

/** Starts a fixture, waits for its first stdout line, SIGKILLs it and reaps it. */
async function killAfterFirstLine(name: string, args: readonly string[], delayMs = 0) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-read", "--allow-write", fixture(name), ...args],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.getReader();
  let seen = "";
  try {
    while (!seen.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  } finally {
    child.kill("SIGKILL");
    await reader.cancel();
  }
  const status = await child.status;
  return { firstLine: seen.split("\n")[0]!, status };
}

Deno.test("kill -9 mid-command leaves a parseable log whose last record is the attempt", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const { firstLine, status } = await killAfterFirstLine("write_attempt.ts", [
      path,
      "closed",
      "hang",
    ]);
    assert.deepEqual(JSON.parse(firstLine).write, { ok: true, seq: 1 });
    assert.equal(status.signal, "SIGKILL");

    const records = await readRecords(path);
    assert.equal(records.length, 1);
    assert.equal(records.at(-1)!.kind, "attempt");
    assert.equal(records.at(-1)!.call_id, "call-killed-mid-command");
    const report = verifyAuditChain(await Deno.readTextFile(path));
    assert.ok(report.ok);
    assert.equal(report.records, 1);
    assert.deepEqual(report.resets, []);

    // The restarted server continues the same chain; the lock died with the process.
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.ok(opened.ok);
    assert.deepEqual(await opened.log.writeOutcome(outcomeFields()), { ok: true, seq: 2 });
    await opened.log.close();
    assert.equal(verifyAuditChain(await Deno.readTextFile(path)).ok, true);
  });
});

Deno.test("a writer killed while flushing leaves a log that reopens and verifies", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    await killAfterFirstLine("write_forever.ts", [path], 150);
    const killed = verifyAuditChain(await Deno.readFile(path));
    if (!killed.ok) {
      // Only a write cut off at the very end is acceptable.
      assert.match(killed.problem, /the last line is incomplete/);
    }
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.ok(opened.ok, !opened.ok ? opened.reason : "");
    const written = await opened.log.writeOutcome(outcomeFields());
    assert.ok(written.ok);
    await opened.log.close();
    const report = verifyAuditChain(await Deno.readFile(path));
    assert.ok(report.ok, JSON.stringify(report));
    assert.equal(report.resets.length, killed.ok ? 0 : 1);
    assert.ok(report.records > 8);
  });
});

Deno.test({
  name: "the attempt's bytes are written and fdatasync'd before writeAttempt() resolves (strace)",
  ignore: !HAS_STRACE,
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = `${dir}/audit.jsonl`;
      const trace = `${dir}/strace.txt`;
      const ran = await runFixture("write_attempt.ts", [path, "closed", "exit"], {
        permissions: ["--allow-read", "--allow-write"],
        wrapper: [
          "strace",
          "-f",
          "-qq",
          // Descriptors with their paths: the runtime may write through one
          // descriptor of the log and fdatasync through a duplicate of it.
          "-y",
          "-s",
          "400",
          "-e",
          "trace=write,fdatasync,fsync",
          "-o",
          trace,
        ],
      });
      assert.equal(ran.code, 0, ran.stderr);
      const lines = (await Deno.readTextFile(trace)).split("\n");

      const onLog = `\\d+<${path.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")}>`;
      const recordWrite = lines.findIndex((line) =>
        new RegExp(`write\\(${onLog}, "\\{\\\\"seq\\\\":1,`).test(line)
      );
      assert.ok(recordWrite >= 0, "the record write is in the trace");
      assert.match(lines[recordWrite]!, /\\"kind\\":\\"attempt\\"/);

      const syncStart = lines.findIndex((line, i) =>
        i > recordWrite && new RegExp(`fdatasync\\(${onLog}[) ]`).test(line)
      );
      assert.ok(syncStart > recordWrite, "fdatasync on the log's fd follows the write");
      const pid = lines[syncStart]!.split(/\s+/)[0];
      const syncDone = /= 0$/.test(lines[syncStart]!)
        ? syncStart
        : lines.findIndex((line, i) =>
          i > syncStart && line.startsWith(`${pid} `) &&
          /<\.\.\. fdatasync resumed>.*= 0$/.test(line)
        );
      assert.ok(syncDone >= syncStart, "fdatasync succeeded");

      const resolved = lines.findIndex((line) => /write\(1(<[^>]*>)?, "\{\\"open\\"/.test(line));
      assert.ok(
        resolved > syncDone,
        "the fixture saw the write resolve only after fdatasync returned",
      );
    });
  },
});

/**
 * Runs fixture `write_outcome.ts` under strace and returns its trace: the
 * log's writes by seq, its fdatasyncs, and the fixture's stdout lines.
 */
async function traceOutcome(dir: string, args: readonly string[]) {
  const path = `${dir}/audit.jsonl`;
  const trace = `${dir}/strace.txt`;
  const ran = await runFixture("write_outcome.ts", [path, ...args], {
    permissions: ["--allow-read", "--allow-write"],
    // -y: the runtime may write through one descriptor of the log and
    // fdatasync through a duplicate of it, so descriptors carry their paths.
    wrapper: ["strace", "-f", "-qq", "-y", "-s", "80", "-e", "trace=write,fdatasync", "-o", trace],
  });
  assert.equal(ran.code, 0, ran.stderr);
  const lines = (await Deno.readTextFile(trace)).split("\n");
  const onLog = `\\d+<${path.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")}>`;
  const writeOf = (seq: number) => {
    const at = lines.findIndex((line) =>
      new RegExp(`write\\(${onLog}, "\\{\\\\"seq\\\\":${seq},`).test(line)
    );
    assert.ok(at >= 0, `the write of seq ${seq} is in the trace`);
    return at;
  };
  const syncs = lines.flatMap((line, i) =>
    new RegExp(`fdatasync\\(${onLog}[) ]`).test(line) ? [i] : []
  );
  const printed = (text: string) => {
    const at = lines.findIndex((line) =>
      new RegExp(`write\\(1(<[^>]*>)?, "${text}\\\\n"`).test(line)
    );
    assert.ok(at >= 0, `the fixture's "${text}" is in the trace`);
    return at;
  };
  return { writeOf, syncs, printed };
}

Deno.test({
  name:
    "an outcome followed by the next attempt gets no fdatasync of its own: the attempt's covers both (strace)",
  ignore: !HAS_STRACE,
  fn: async () => {
    await withTempDir(async (dir) => {
      const { writeOf, syncs, printed } = await traceOutcome(dir, ["attempt"]);
      const outcome = writeOf(2);
      const next = writeOf(3);
      assert.deepEqual(
        syncs.filter((i) => i > outcome && i < next),
        [],
        "the next attempt did not queue behind the outcome's fdatasync",
      );
      const covering = syncs.find((i) => i > next);
      assert.ok(covering !== undefined && covering < printed("attempt"), "one fdatasync follows");
    });
  },
});

Deno.test({
  name:
    "an outcome with nothing after it is fdatasync'd by the timer, though the log is never closed (strace)",
  ignore: !HAS_STRACE,
  fn: async () => {
    await withTempDir(async (dir) => {
      const { writeOf, syncs, printed } = await traceOutcome(dir, ["quiet", "500"]);
      const outcome = writeOf(2);
      assert.ok(
        syncs.some((i) => i > outcome && i < printed("quiet")),
        "the outcome was made durable while the server was quiet",
      );
    });
  },
});

Deno.test({
  name: "close() makes a deferred outcome durable before it returns (strace)",
  ignore: !HAS_STRACE,
  fn: async () => {
    await withTempDir(async (dir) => {
      const { writeOf, syncs, printed } = await traceOutcome(dir, ["close"]);
      const outcome = writeOf(2);
      assert.ok(syncs.some((i) => i > outcome && i < printed("closed")));
    });
  },
});
