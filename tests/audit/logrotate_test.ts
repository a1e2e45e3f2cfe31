/**
 * Real logrotate runs against a real server taking calls: `create`,
 * `create` + `compress`, and `copytruncate`, five rotations each, with the
 * `postrotate` SIGHUP the docs recommend. No acknowledged call may lack its
 * record, the server survives every SIGHUP, and the series verifies (for
 * copytruncate, a gap is allowed only where a `segment` record explains it).
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ChainVerifier, runAuditVerify } from "../../src/audit/mod.ts";
import { planLaunch } from "../../scripts/launch.ts";
import { policyToml, REPO, serverEnv } from "../_helpers/stdio_harness.ts";
import type { CommandResult } from "../../src/result/codes.ts";
import { hasTool, withTempDir } from "./_helpers.ts";

const LOGROTATE = "/usr/sbin/logrotate";
const HAS_LOGROTATE = await Deno.stat(LOGROTATE).then(() => true, () => false) &&
  hasTool("gzip");
const ROTATIONS = 5;

async function readMaybeGzip(path: string): Promise<Uint8Array> {
  const file = await Deno.open(path);
  const stream = path.endsWith(".gz")
    ? file.readable.pipeThrough(new DecompressionStream("gzip"))
    : file.readable;
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function rotationRun(stanza: string, servers = 1) {
  return await withTempDir(async (root) => {
    const dir = await Deno.realPath(root);
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/logs`, { mode: 0o700 });
    const log = `${dir}/logs/audit.jsonl`;
    const policyPath = `${dir}/policy.toml`;
    await Deno.writeTextFile(policyPath, policyToml(`${dir}/jail`, log, { allow: ["echo"] }));
    // Servers are started directly (not through the launcher), so the pids
    // postrotate signals are the processes that write the log.
    const plan = await planLaunch(["serve", "--policy", policyPath], REPO);
    if (!plan.ok) throw new Error(plan.message);
    let stderr = "";
    const clients: Client[] = [];
    const pids: number[] = [];
    for (let n = 0; n < servers; n++) {
      const transport = new StdioClientTransport({
        command: Deno.execPath(),
        args: [...plan.argv],
        env: serverEnv(dir),
        stderr: "pipe",
      });
      transport.stderr?.on(
        "data",
        (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk),
      );
      const client = new Client({ name: "htmcp-logrotate", version: "1.0.0" });
      await client.connect(transport);
      clients.push(client);
      pids.push(transport.pid!);
    }
    const conf = `${dir}/logrotate.conf`;
    await Deno.writeTextFile(
      conf,
      `${log} {\n  rotate 10\n  missingok\n${stanza}\n  postrotate\n    /bin/kill -HUP ${
        pids.join(" ")
      }\n  endscript\n}\n`,
    );

    const acknowledged: string[] = [];
    const refused: string[] = [];
    let stop = false;
    const caller = async (lane: number) => {
      // Bounded: stops after the rotations, or after 3,000 calls per lane.
      for (let i = 0; !stop && i < 3000; i++) {
        const command = `echo lane${lane}-${i}`;
        const result = await clients[lane % clients.length]!.callTool(
          { name: "run_command", arguments: { command } },
          undefined,
          { timeout: 60_000 },
        );
        const code = (result.structuredContent as unknown as CommandResult).code;
        if (code === "OK") acknowledged.push(command);
        else refused.push(code);
      }
    };
    const callers = Array.from({ length: 2 * servers }, (_, lane) => caller(lane));
    for (let round = 0; round < ROTATIONS; round++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const rotated = await new Deno.Command(LOGROTATE, {
        args: ["-f", "-s", `${dir}/logrotate.state`, conf],
      }).output();
      assert.equal(rotated.code, 0, new TextDecoder().decode(rotated.stderr));
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    stop = true;
    await Promise.all(callers);
    // SIGHUP never stopped the server: it still answers.
    let lastCode = "OK";
    for (const client of clients) {
      const last = await client.callTool({
        name: "run_command",
        arguments: { command: "echo last" },
      });
      const code = (last.structuredContent as unknown as CommandResult).code;
      if (code !== "OK") lastCode = code;
      await client.close();
    }

    const names = [...Deno.readDirSync(`${dir}/logs`)].map((entry) => entry.name);
    const rotatedNames = names.filter((name) => name !== "audit.jsonl").sort((a, b) =>
      Number(b.split(".")[2]) - Number(a.split(".")[2])
    );
    assert.equal(rotatedNames.length, ROTATIONS, names.join(" "));
    const series = [...rotatedNames.map((name) => `${dir}/logs/${name}`), log];
    const reports = [];
    let text = "";
    for (const path of series) {
      const bytes = await readMaybeGzip(path);
      text += new TextDecoder().decode(bytes);
      // A series: a file may start with a record a copytruncate displaced,
      // which the next file's segment record explains (runAuditVerify below
      // checks that it does).
      const verifier = new ChainVerifier({ allowDisplacedStart: true });
      verifier.push(bytes);
      const report = verifier.finish();
      assert.ok(report.ok, `${path}: ${JSON.stringify(report)}`);
      // An empty file (copied while no record was written) links nothing.
      if (report.records > 0) reports.push(report);
    }
    // Records the series misses between two files, as the later file's
    // segment record names them (copytruncate's copy-then-truncate window).
    let explainedGap = 0;
    for (let i = 1; i < reports.length; i++) {
      const before = reports[i - 1]!;
      const after = reports[i]!;
      assert.ok(before.ok && after.ok && after.continues !== null, `file ${i} continues nothing`);
      if (after.continues.previousSha256 !== before.head) {
        assert.ok(after.continues.previousSeq > before.lastSeq, `file ${i} names a wrong head`);
        explainedGap += after.continues.previousSeq - before.lastSeq;
      }
    }
    const printed: string[] = [];
    const verifyCode = await runAuditVerify(series, (line) => printed.push(line));
    const missing = acknowledged.filter((command) => !text.includes(`"command_raw":"${command}"`));
    console.log(
      `${stanza.trim().replaceAll("\n", ",")}: ${acknowledged.length} acknowledged, ` +
        `${refused.length} refused, ${missing.length} without a record, ${explainedGap} explained gap`,
    );
    assert.ok(acknowledged.length > 0);
    return { missing, refused, explainedGap, stderr, lastCode, verifyCode, printed };
  });
}

Deno.test({
  name:
    "logrotate create: five rotations under load, no call refused, no record lost, the series verifies",
  ignore: !HAS_LOGROTATE,
  fn: async () => {
    const run = await rotationRun("  create 0600");
    assert.equal(run.lastCode, "OK", run.stderr);
    assert.equal(run.verifyCode, 0, run.printed.join("\n"));
    assert.deepEqual(run.missing, []);
    assert.deepEqual(run.refused, []);
    assert.equal(run.explainedGap, 0);
  },
});

Deno.test({
  name:
    "logrotate create + compress + delaycompress: five rotations under load, no outage, no record lost",
  ignore: !HAS_LOGROTATE,
  fn: async () => {
    const run = await rotationRun("  create 0600\n  compress\n  delaycompress");
    assert.equal(run.lastCode, "OK", run.stderr);
    assert.equal(run.verifyCode, 0, run.printed.join("\n"));
    assert.deepEqual(run.missing, []);
    assert.deepEqual(run.refused, []);
    assert.equal(run.explainedGap, 0);
  },
});

Deno.test({
  name:
    "logrotate create + compress: no outage, and a record gzip raced would be a gap the next segment names",
  ignore: !HAS_LOGROTATE,
  fn: async () => {
    // gzip can read the renamed file before an append that passed its check
    // just before the rename lands there; docs/audit.md recommends delaycompress.
    const run = await rotationRun("  create 0600\n  compress");
    assert.equal(run.lastCode, "OK", run.stderr);
    assert.deepEqual(run.refused, []);
    assert.ok(run.missing.length <= run.explainedGap, JSON.stringify(run.missing));
    assert.ok(run.verifyCode === 0 || run.verifyCode === 3, run.printed.join("\n"));
  },
});

Deno.test({
  name:
    "logrotate create with two servers on one log: both follow every rotation, no record lost, one chain",
  ignore: !HAS_LOGROTATE,
  fn: async () => {
    const run = await rotationRun("  create 0600\n  compress\n  delaycompress", 2);
    assert.equal(run.lastCode, "OK", run.stderr);
    assert.equal(run.verifyCode, 0, run.printed.join("\n"));
    assert.deepEqual(run.missing, []);
    assert.deepEqual(run.refused, []);
    assert.equal(run.explainedGap, 0);
  },
});

Deno.test({
  name:
    "logrotate copytruncate: the cut is detected, and every lost record is a gap the next segment names",
  ignore: !HAS_LOGROTATE,
  fn: async () => {
    const run = await rotationRun("  copytruncate");
    // The cut is on record: every truncated file starts with (or soon has) a segment.
    assert.equal(run.verifyCode, 3, run.printed.join("\n"));
    assert.match(run.printed.join("\n"), /file_truncated/);
    // Closed mode refuses calls between the truncation and the SIGHUP; each
    // acknowledged call without a record lies in a gap a segment record names.
    assert.ok(run.missing.length <= run.explainedGap, JSON.stringify(run));
    for (const code of new Set([...run.refused, run.lastCode])) {
      assert.ok(code === "OK" || code === "AUDIT_UNAVAILABLE", code);
    }
  },
});
