/**
 * Signed checkpoints make a cut-off log tail detectable: a real server
 * writes them every N records and at shutdown, `htmcp audit verify
 * --checkpoints` names exactly the records missing after one, and refuses
 * a checkpoint that another key signed or that was edited.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { planLaunch } from "../../scripts/launch.ts";
import { type Harness, REPO, startHarness } from "../_helpers/stdio_harness.ts";
import { parseCheckpointLine, verifyAuditChain } from "../../src/audit/mod.ts";
import { signedBytes } from "../../src/audit/checkpoint.ts";

async function htmcp(args: string[]) {
  const plan = await planLaunch(args, REPO);
  if (!plan.ok) throw new Error(plan.message);
  const output = await new Deno.Command(Deno.execPath(), {
    args: [...plan.argv],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** Waits (bounded) until `check` holds, polling the disk. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function checkpointLines(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((line) => line !== "");
}

const CHECKPOINT_TOML = "[audit]\ncheckpoint_every = 5\ncheckpoint_stderr = true\n";

/** Runs `count` echo calls, closes the client, and waits for the shutdown checkpoint. */
async function runAndStop(harness: Harness, count: number, checkpoints: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const result = await harness.call("run_command", { command: `echo call-${i}` });
    assert.equal(result.code, "OK");
  }
  await harness.client.close();
  await eventually(
    async () => (await checkpointLines(checkpoints)).some((line) => line.includes('"shutdown"')),
    "the shutdown checkpoint",
  );
}

/** Keeps the log's records up to and including `lastSeq`. */
async function cutLogAfter(path: string, lastSeq: number): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "");
  const kept = lines.filter((line) => (JSON.parse(line).seq as number) <= lastSeq);
  await Deno.writeTextFile(path, kept.map((line) => `${line}\n`).join(""));
}

Deno.test("a real server signs checkpoints every N records and at shutdown; verify finds them holding", async () => {
  const harness = await startHarness({
    topToml: 'state_dir = "state"',
    extraToml: CHECKPOINT_TOML,
  });
  const checkpoints = `${harness.dir}/audit.checkpoints.jsonl`;
  try {
    await runAndStop(harness, 8, checkpoints);
    const lines = await checkpointLines(checkpoints);
    const parsed = lines.map((line) => {
      const read = parseCheckpointLine(line);
      assert.ok(read.ok, line);
      return read.checkpoint;
    });
    const report = verifyAuditChain(await Deno.readFile(harness.auditLog));
    assert.ok(report.ok);
    const intervals = parsed.filter((checkpoint) => checkpoint.reason === "interval");
    // 8 calls are 16 records plus start and stop events: at least three multiples of 5 passed.
    assert.ok(intervals.length >= 3, lines.join("\n"));
    const buckets = intervals.map((checkpoint) => Math.floor(checkpoint.seq / 5));
    assert.equal(new Set(buckets).size, buckets.length, "one checkpoint per multiple of N");
    const last = parsed.at(-1)!;
    assert.equal(last.reason, "shutdown");
    assert.equal(last.seq, report.lastSeq);
    assert.equal(last.sha256, report.head);
    assert.equal(last.file, "audit.jsonl");
    // The same lines went to stderr, for journald.
    const copies = harness.stderr().split("\n").filter((line) =>
      line.startsWith("htmcp: audit checkpoint {")
    );
    assert.deepEqual(copies.map((line) => line.slice(line.indexOf("{"))), lines);
    // The key is owner-only, its public half beside it.
    const keyDir = `${harness.dir}/state/audit-key`;
    assert.equal((await Deno.stat(`${keyDir}/ed25519-private.json`)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(keyDir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(checkpoints)).mode! & 0o777, 0o600);

    const key = await htmcp(["audit", "key", "--policy", harness.policyPath]);
    assert.equal(key.code, 0, key.stderr);
    const jwk = JSON.parse(key.stdout);
    assert.deepEqual(
      jwk,
      JSON.parse(await Deno.readTextFile(`${keyDir}/ed25519-public.json`)),
    );
    assert.equal(jwk.kid, last.key);
    const keyFile = `${harness.dir}/audit-key.pub.json`;
    await Deno.writeTextFile(keyFile, key.stdout);

    const ok = await htmcp([
      "audit",
      "verify",
      "--checkpoints",
      checkpoints,
      "--key",
      keyFile,
      harness.auditLog,
    ]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /Checkpoints hold: \d+ signed by key [0-9a-f]{16}/);
    assert.match(ok.stdout, /No record follows it\./);

    // The stderr copies (as journald keeps them) verify just as well.
    const journal = `${harness.dir}/journal.txt`;
    await Deno.writeTextFile(journal, copies.join("\n") + "\n");
    const fromJournal = await htmcp([
      "audit",
      "verify",
      "--checkpoints",
      journal,
      "--key",
      keyFile,
      harness.auditLog,
    ]);
    assert.equal(fromJournal.code, 0, fromJournal.stdout);
  } finally {
    await Deno.remove(harness.dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("verify --checkpoints names exactly the records cut from the log's end, and exits 1", async () => {
  const harness = await startHarness({
    topToml: 'state_dir = "state"',
    extraToml: CHECKPOINT_TOML,
  });
  const checkpoints = `${harness.dir}/audit.checkpoints.jsonl`;
  try {
    await runAndStop(harness, 6, checkpoints);
    const key = await htmcp(["audit", "key", "--policy", harness.policyPath]);
    const keyFile = `${harness.dir}/key.json`;
    await Deno.writeTextFile(keyFile, key.stdout);
    const lines = await checkpointLines(checkpoints);
    const shutdown = parseCheckpointLine(lines.at(-1)!);
    assert.ok(shutdown.ok);
    const head = shutdown.checkpoint.seq;
    const cutTo = head - 4;
    await cutLogAfter(harness.auditLog, cutTo);
    // The shortened log is still a valid chain on its own: that is the blind spot.
    const chain = verifyAuditChain(await Deno.readFile(harness.auditLog));
    assert.ok(chain.ok);
    assert.equal(chain.lastSeq, cutTo);
    const plain = await htmcp(["audit", "verify", harness.auditLog]);
    assert.equal(plain.code, 0);

    const ran = await htmcp([
      "audit",
      "verify",
      "--checkpoints",
      checkpoints,
      "--key",
      keyFile,
      harness.auditLog,
    ]);
    assert.equal(ran.code, 1, ran.stdout + ran.stderr);
    assert.match(
      ran.stdout,
      new RegExp(
        `MISSING 4 record\\(s\\) at its end: seq ${
          cutTo + 1
        } to ${head}\\. The log ends at seq ${cutTo}`,
      ),
    );

    // Cut below the last interval checkpoint too: still exact, from the latest.
    await cutLogAfter(harness.auditLog, 3);
    const deeper = await htmcp([
      "audit",
      "verify",
      "--checkpoints",
      checkpoints,
      "--key",
      keyFile,
      harness.auditLog,
    ]);
    assert.equal(deeper.code, 1);
    assert.match(
      deeper.stdout,
      new RegExp(`MISSING ${head - 3} record\\(s\\) at its end: seq 4 to ${head}\\.`),
    );
  } finally {
    await Deno.remove(harness.dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("verify --checkpoints refuses a checkpoint signed by another key, or edited, and a rewritten record", async () => {
  const harness = await startHarness({
    topToml: 'state_dir = "state"',
    extraToml: CHECKPOINT_TOML,
  });
  const checkpoints = `${harness.dir}/audit.checkpoints.jsonl`;
  try {
    await runAndStop(harness, 4, checkpoints);
    const key = await htmcp(["audit", "key", "--policy", harness.policyPath]);
    const keyFile = `${harness.dir}/key.json`;
    await Deno.writeTextFile(keyFile, key.stdout);
    const genuine = await checkpointLines(checkpoints);
    const last = parseCheckpointLine(genuine.at(-1)!);
    assert.ok(last.ok);
    const verify = (file: string) =>
      htmcp(["audit", "verify", "--checkpoints", file, "--key", keyFile, harness.auditLog]);

    // An attacker's own key, claiming the genuine key's fingerprint.
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, false, [
      "sign",
      "verify",
    ]) as CryptoKeyPair;
    const claim = { ...last.checkpoint, seq: last.checkpoint.seq + 40 };
    const sig = await crypto.subtle.sign("Ed25519", pair.privateKey, signedBytes(claim));
    const forged = JSON.stringify({
      kind: "checkpoint",
      ...claim,
      sig: Buffer.from(sig).toString("base64url"),
    });
    const forgedFile = `${harness.dir}/forged.jsonl`;
    await Deno.writeTextFile(forgedFile, [...genuine, forged].join("\n") + "\n");
    const refused = await verify(forgedFile);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(
      refused.stdout,
      new RegExp(`line ${genuine.length + 1} is REFUSED: its signature does not verify`),
    );
    assert.doesNotMatch(refused.stdout, /MISSING/);

    // The genuine line with its hash edited.
    const edited = genuine.at(-1)!.replace(last.checkpoint.sha256, "0".repeat(64));
    const editedFile = `${harness.dir}/edited.jsonl`;
    await Deno.writeTextFile(editedFile, [...genuine.slice(0, -1), edited].join("\n") + "\n");
    const editedRun = await verify(editedFile);
    assert.equal(editedRun.code, 1);
    assert.match(editedRun.stdout, /REFUSED: its signature does not verify/);

    // A checkpoint by a different key fingerprint.
    const otherKid = genuine.at(-1)!.replace(
      `"key":"${last.checkpoint.key}"`,
      '"key":"0123456789abcdef"',
    );
    const otherFile = `${harness.dir}/other.jsonl`;
    await Deno.writeTextFile(otherFile, otherKid + "\n");
    const other = await verify(otherFile);
    assert.equal(other.code, 1);
    assert.match(other.stdout, /names the signing key 0123456789abcdef, not the given key/);

    // The genuine checkpoints, but the log's last record rewritten (and re-chained: it is last).
    const logLines = (await Deno.readTextFile(harness.auditLog)).split("\n").filter((l) => l);
    const lastRecord = JSON.parse(logLines.at(-1)!);
    lastRecord.reason = "rewritten";
    logLines[logLines.length - 1] = JSON.stringify(lastRecord);
    await Deno.writeTextFile(harness.auditLog, logLines.join("\n") + "\n");
    const rewritten = await verify(checkpoints);
    assert.equal(rewritten.code, 1, rewritten.stdout);
    assert.match(
      rewritten.stdout,
      new RegExp(`record seq ${last.checkpoint.seq} is not the record the checkpoint`),
    );

    // Flags that must come together.
    const alone = await htmcp(["audit", "verify", "--checkpoints", checkpoints, harness.auditLog]);
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--checkpoints and --key go together/);
  } finally {
    await Deno.remove(harness.dir, { recursive: true }).catch(() => {});
  }
});
