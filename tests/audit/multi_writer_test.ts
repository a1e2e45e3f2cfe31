/**
 * Several htmcp processes share one audit log: every record of every writer
 * lands whole in one chain, and a writer killed with SIGKILL mid-call or
 * mid-append never breaks it for the others.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { AuditLog, runAuditVerify, verifyAuditChain } from "../../src/audit/mod.ts";
import { planLaunch } from "../../scripts/launch.ts";
import { policyToml, REPO, serverEnv } from "../_helpers/stdio_harness.ts";
import type { CommandResult } from "../../src/result/codes.ts";
import { attemptFields, fixture, noRedaction, readLines, withTempDir } from "./_helpers.ts";

interface Server {
  readonly client: Client;
  readonly pid: number;
  stderr(): string;
}

/**
 * Starts a server directly under the flags the launcher would give it (no
 * launcher process in between), so the pid the test holds is the server's
 * own and SIGKILL reaches the process that writes the log.
 */
async function startServer(policyPath: string, home: string): Promise<Server> {
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
  const client = new Client({ name: "htmcp-multi-writer", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`server did not start: ${stderr}`, { cause: error });
  }
  const pid = transport.pid;
  if (pid === null) throw new Error("no server pid");
  return { client, pid, stderr: () => stderr };
}

async function run(server: Server, command: string): Promise<CommandResult> {
  const result = await server.client.callTool(
    { name: "run_command", arguments: { command } },
    undefined,
    { timeout: 60_000 },
  );
  return result.structuredContent as unknown as CommandResult;
}

/** Runs `commands` with at most `width` in flight (the server's own limit is 4). */
async function runAll(server: Server, commands: readonly string[], width = 4) {
  const results: CommandResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < commands.length) {
      const index = next++;
      results[index] = await run(server, commands[index]!);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

Deno.test("three stdio servers on one audit log: 900 calls in parallel form one chain; a SIGKILLed server does not break it", async () => {
  await withTempDir(async (root) => {
    const dir = await Deno.realPath(root);
    const jail = `${dir}/jail`;
    await Deno.mkdir(jail);
    await prepareJail(jail);
    const logs = `${dir}/logs`;
    await Deno.mkdir(logs);
    const auditLog = `${logs}/audit.jsonl`;
    const policyPath = `${dir}/policy.toml`;
    await Deno.writeTextFile(
      policyPath,
      policyToml(jail, auditLog, { allow: ["echo", "sleep"] }),
    );
    const servers = await Promise.all([0, 1, 2].map(() => startServer(policyPath, dir)));
    try {
      const CALLS = 300;
      const results = await Promise.all(
        servers.map((server, s) =>
          runAll(server, Array.from({ length: CALLS }, (_, i) => `echo w${s}-c${i}`))
        ),
      );
      for (const list of results) {
        assert.equal(list.length, CALLS);
        assert.ok(list.every((result) => result.code === "OK"), JSON.stringify(list[0]));
      }

      const lines = await readLines(auditLog);
      const records = lines.map((line) => JSON.parse(line));
      const attempts = new Map<string, Record<string, unknown>>();
      for (const record of records) {
        if (record.kind === "attempt") attempts.set(record.command_raw as string, record);
      }
      const outcomes = new Set(
        records.filter((record) => record.kind === "outcome").map((record) => record.call_id),
      );
      const writers = new Set<string>();
      for (let s = 0; s < 3; s++) {
        for (let i = 0; i < CALLS; i++) {
          const attempt = attempts.get(`echo w${s}-c${i}`);
          assert.ok(attempt, `attempt of w${s}-c${i} missing`);
          assert.ok(outcomes.has(attempt.call_id), `outcome of w${s}-c${i} missing`);
          writers.add(attempt.writer as string);
        }
      }
      assert.equal(writers.size, 3, "each server's records carry its own writer id");
      // Every server's server_start names its pid beside its writer id.
      const starts = records.filter((record) => record.event === "server_start");
      assert.deepEqual(
        new Set(starts.map((record) => record.pid)),
        new Set(servers.map((server) => server.pid)),
      );
      const report = verifyAuditChain(await Deno.readFile(auditLog));
      assert.ok(report.ok, JSON.stringify(report));
      assert.deepEqual(report.resets, []);
      assert.ok(report.records >= 3 * CALLS * 2 + 3);
      console.log(`three writers: ${report.records} records in one chain`);

      // SIGKILL the third server while its command runs.
      const victim = servers[2]!;
      const pending = run(victim, "sleep 30").catch((error: unknown) => error);
      for (let waited = 0; waited < 200; waited++) {
        if ((await Deno.readTextFile(auditLog)).includes('"command_raw":"sleep 30"')) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok((await Deno.readTextFile(auditLog)).includes('"command_raw":"sleep 30"'));
      Deno.kill(victim.pid, "SIGKILL");
      await pending;

      // The other two go on writing to the same chain.
      const after = await Promise.all(
        servers.slice(0, 2).map((server, s) =>
          runAll(server, Array.from({ length: 20 }, (_, i) => `echo after${s}-${i}`))
        ),
      );
      assert.ok(after.flat().every((result) => result.code === "OK"));
      const printed: string[] = [];
      assert.equal(await runAuditVerify(auditLog, (line) => printed.push(line)), 0, printed[0]);
      const text = await Deno.readTextFile(auditLog);
      for (let s = 0; s < 2; s++) {
        for (let i = 0; i < 20; i++) {
          assert.ok(text.includes(`"command_raw":"echo after${s}-${i}"`));
        }
      }
    } finally {
      for (const server of servers) await server.client.close().catch(() => {});
    }
  });
});

Deno.test("writers SIGKILLed mid-append on a shared log: the survivors' chain still verifies", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const start = () =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "--allow-read",
          "--allow-write",
          fixture("write_forever.ts"),
          path,
        ],
        stdout: "piped",
        stderr: "null",
      }).spawn();
    const firstLine = async (child: Deno.ChildProcess) => {
      const reader = child.stdout.getReader();
      const { value } = await reader.read();
      reader.releaseLock();
      await child.stdout.cancel();
      return value;
    };
    const survivor = start();
    await firstLine(survivor);
    // Three victims in turn, each killed while it and the survivor append
    // 20 kB records, some of which span several pages.
    for (let round = 0; round < 3; round++) {
      const victim = start();
      await firstLine(victim);
      await new Promise((resolve) => setTimeout(resolve, 150));
      victim.kill("SIGKILL");
      assert.equal((await victim.status).signal, "SIGKILL");
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    survivor.kill("SIGKILL");
    await survivor.status;
    // A writer started afterwards closes off a torn last line, if the final
    // kill left one; the whole chain must then verify.
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.ok(opened.ok);
    assert.equal((await opened.log.writeEvent("server_stop", { reason: "test" })).ok, true);
    await opened.log.close();
    const report = verifyAuditChain(await Deno.readFile(path));
    assert.ok(report.ok, JSON.stringify(report));
    // A victim killed inside a write leaves a torn line, which the next
    // writer closes off with a chain_reset the verifier lists; every other
    // line is a whole record.
    const torn = new Set(
      report.resets.flatMap((reset) =>
        Array.from({ length: reset.line - reset.damagedLine }, (_, i) => reset.damagedLine + i)
      ),
    );
    const writers = new Set(
      (await readLines(path)).filter((_, i) => !torn.has(i + 1)).map((line) =>
        JSON.parse(line).writer
      ),
    );
    assert.equal(writers.size, 5, "four killed and one later writer");
    console.log(
      `shared log after 4 kills: ${report.records} records, ${report.resets.length} reset(s)`,
    );
  });
});

Deno.test("a writer stuck holding the log's lock gets calls refused after a bounded wait, not hung", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction, warn: () => {} });
    assert.ok(opened.ok);
    // Another process takes the same flock(2) lock on the folder, says so, and holds it.
    const holder = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const f = await Deno.open(${JSON.stringify(dir)}); await f.lock(true); ` +
        `console.log("held"); setInterval(() => {}, 60000);`,
      ],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const reader = holder.stdout.getReader();
      await reader.read();
      reader.releaseLock();
      const started = Date.now();
      const written = await opened.log.writeAttempt(attemptFields());
      assert.equal(written.ok, false);
      assert.match(
        !written.ok ? written.reason : "",
        /another writer has held its lock for over 10 s/,
      );
      assert.ok(Date.now() - started < 20_000);
    } finally {
      holder.kill("SIGKILL");
      await holder.status;
      await holder.stdout.cancel().catch(() => {});
    }
    // The lock died with its holder: writes go on.
    assert.deepEqual(await opened.log.writeAttempt(attemptFields()), { ok: true, seq: 1 });
    await opened.log.close();
  });
});
