/**
 * Checkpoints with several servers on one log and with built-in rotation:
 * each checkpoint is written under the log's append lock, so the head it
 * signs is the shared chain's real head; boundaries are counted on `seq`,
 * so two servers do not both checkpoint the same multiple of N; a rotated
 * file's head is signed under its new name, and the series verifies.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { planLaunch } from "../../scripts/launch.ts";
import { policyToml, REPO, serverEnv } from "../_helpers/stdio_harness.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { type Checkpoint, parseCheckpointLine } from "../../src/audit/mod.ts";
import { sha256Hex } from "../../src/audit/line.ts";
import type { CommandResult } from "../../src/result/codes.ts";
import { withTempDir } from "./_helpers.ts";

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

async function startClient(policyPath: string, home: string): Promise<Client> {
  const plan = await planLaunch(["serve", "--policy", policyPath], REPO);
  if (!plan.ok) throw new Error(plan.message);
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...plan.argv],
    env: serverEnv(home),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => {
    stderr += new TextDecoder().decode(chunk);
  });
  const client = new Client({ name: "htmcp-checkpoint-writers", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`server did not start: ${stderr}`, { cause: error });
  }
  return client;
}

async function echo(client: Client, text: string): Promise<void> {
  const result = await client.callTool(
    { name: "run_command", arguments: { command: `echo ${text}` } },
    undefined,
    { timeout: 60_000 },
  );
  assert.equal((result.structuredContent as unknown as CommandResult).code, "OK");
}

async function readCheckpoints(path: string): Promise<Checkpoint[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((line) => line !== "").map((line) => {
    const parsed = parseCheckpointLine(line);
    assert.ok(parsed.ok, line);
    return parsed.checkpoint;
  });
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Line hash by seq over the given files. */
async function hashesBySeq(paths: readonly string[]): Promise<Map<number, string>> {
  const hashes = new Map<number, string>();
  for (const path of paths) {
    for (const line of (await Deno.readTextFile(path)).split("\n")) {
      if (line === "") continue;
      hashes.set(JSON.parse(line).seq, sha256Hex(new TextEncoder().encode(line)));
    }
  }
  return hashes;
}

async function setUp(dir: string, extraToml: string) {
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  await Deno.mkdir(`${dir}/logs`);
  const auditLog = `${dir}/logs/audit.jsonl`;
  const policyPath = `${dir}/policy.toml`;
  await Deno.writeTextFile(
    policyPath,
    policyToml(jail, auditLog, {
      allow: ["echo"],
      topToml: 'state_dir = "state"',
      extraToml,
    }),
  );
  return { auditLog, policyPath, checkpoints: `${dir}/logs/audit.checkpoints.jsonl` };
}

Deno.test("two servers on one log: one checkpoint per multiple of N across both, each matching the shared chain", async () => {
  await withTempDir(async (root) => {
    const dir = await Deno.realPath(root);
    const { auditLog, policyPath, checkpoints } = await setUp(
      dir,
      "[audit]\ncheckpoint_every = 7\n",
    );
    const clients = await Promise.all([startClient(policyPath, dir), startClient(policyPath, dir)]);
    const CALLS = 20;
    await Promise.all(clients.map(async (client, c) => {
      for (let i = 0; i < CALLS; i++) await echo(client, `w${c}-${i}`);
    }));
    await Promise.all(clients.map((client) => client.close()));
    await waitFor(
      async () =>
        (await readCheckpoints(checkpoints)).filter((cp) => cp.reason === "shutdown").length === 2,
      "two shutdown checkpoints",
    );
    const written = await readCheckpoints(checkpoints);
    const hashes = await hashesBySeq([auditLog]);
    for (const checkpoint of written) {
      assert.equal(hashes.get(checkpoint.seq), checkpoint.sha256, `seq ${checkpoint.seq}`);
    }
    const intervals = written.filter((cp) => cp.reason === "interval");
    const buckets = intervals.map((cp) => Math.floor(cp.seq / 7));
    assert.equal(new Set(buckets).size, buckets.length, "no multiple of N checkpointed twice");
    // 40 calls are 80 records and more: every multiple of 7 up to 77 was crossed once.
    assert.ok(intervals.length >= 11, `${intervals.length} interval checkpoints`);
    assert.equal(new Set(written.map((cp) => cp.writer)).size, 2, "both writers checkpointed");
    assert.equal(new Set(written.map((cp) => cp.key)).size, 1, "one key in the shared state dir");
    const seqs = written.map((cp) => cp.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), "checkpoints in chain order");

    const key = await htmcp(["audit", "key", "--policy", policyPath]);
    assert.equal(key.code, 0, key.stderr);
    const keyFile = `${dir}/key.json`;
    await Deno.writeTextFile(keyFile, key.stdout);
    const args = ["audit", "verify", "--checkpoints", checkpoints, "--key", keyFile, auditLog];
    const ok = await htmcp(args);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);

    const last = Math.max(...seqs);
    const lines = (await Deno.readTextFile(auditLog)).split("\n").filter((line) => line !== "");
    await Deno.writeTextFile(auditLog, lines.slice(0, lines.length - 10).join("\n") + "\n");
    const cut = await htmcp(args);
    assert.equal(cut.code, 1);
    assert.match(
      cut.stdout,
      new RegExp(`MISSING 10 record\\(s\\) at its end: seq ${last - 9} to ${last}\\.`),
    );
  });
});

Deno.test("rotation signs the rotated file's head under its new name; the series verifies against the checkpoints", async () => {
  await withTempDir(async (root) => {
    const dir = await Deno.realPath(root);
    const { auditLog, policyPath, checkpoints } = await setUp(
      dir,
      "[audit]\ncheckpoint_every = 0\nrotate_bytes = 4096\n",
    );
    const client = await startClient(policyPath, dir);
    for (let i = 0; i < 12; i++) await echo(client, `rotate-${i}`);
    await client.close();
    await waitFor(
      async () => (await readCheckpoints(checkpoints)).some((cp) => cp.reason === "shutdown"),
      "the shutdown checkpoint",
    );
    const written = await readCheckpoints(checkpoints);
    assert.ok(written.every((cp) => cp.reason !== "interval"), "checkpoint_every = 0: none");
    const rotations = written.filter((cp) => cp.reason === "rotation");
    assert.ok(rotations.length >= 1, JSON.stringify(written));
    const rotated: string[] = [];
    for await (const entry of Deno.readDir(`${dir}/logs`)) {
      if (entry.name.startsWith("audit.jsonl.")) rotated.push(entry.name);
    }
    rotated.sort();
    assert.deepEqual(rotations.map((cp) => cp.file), rotated);
    const series = [...rotated.map((name) => `${dir}/logs/${name}`), auditLog];
    const hashes = await hashesBySeq(series);
    for (const checkpoint of written) assert.equal(hashes.get(checkpoint.seq), checkpoint.sha256);

    const key = await htmcp(["audit", "key", "--policy", policyPath]);
    const keyFile = `${dir}/key.json`;
    await Deno.writeTextFile(keyFile, key.stdout);
    const ok = await htmcp([
      "audit",
      "verify",
      "--checkpoints",
      checkpoints,
      "--key",
      keyFile,
      ...series,
    ]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /linked end to end/);
    assert.match(ok.stdout, /Checkpoints hold/);
    // The newest file removed altogether: its records are named as missing.
    const withoutLast = await htmcp([
      "audit",
      "verify",
      "--checkpoints",
      checkpoints,
      "--key",
      keyFile,
      ...series.slice(0, -1),
    ]);
    assert.equal(withoutLast.code, 1, withoutLast.stdout);
    assert.match(withoutLast.stdout, /MISSING \d+ record\(s\) at its end/);
  });
});
