/**
 * SIGHUP reopens the audit log and never stops the server, in both serve
 * modes, through the launcher that forwards it: an external rename followed
 * by SIGHUP rotates the log with no outage and no lost record.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startCliServer, writeLoopbackPolicy } from "../../scripts/conformance.ts";
import { MAIN, policyToml, serverEnv, startHarness } from "../_helpers/stdio_harness.ts";
import { runAuditVerify } from "../../src/audit/mod.ts";
import { readRecords } from "./_helpers.ts";

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function assertRotated(auditLog: string): Promise<void> {
  const [first] = await readRecords(auditLog);
  assert.equal(first!.kind, "segment");
  assert.equal(first!.found, "path_missing");
  const old = await readRecords(`${auditLog}.1`);
  assert.ok(!old.some((record) => record.event === "server_stop"), "SIGHUP did not stop it");
  const printed: string[] = [];
  assert.equal(await runAuditVerify([`${auditLog}.1`, auditLog], (l) => printed.push(l)), 0);
  assert.match(printed.at(-1)!, /linked end to end/);
}

Deno.test("stdio: rename the log and send SIGHUP: the server lives on and writes to a new linked file", async () => {
  const harness = await startHarness({ allow: ["echo"] });
  try {
    assert.equal((await harness.call("run_command", { command: "echo one" })).code, "OK");
    await Deno.rename(harness.auditLog, `${harness.auditLog}.1`);
    harness.kill("SIGHUP");
    await until(() => harness.stderr().includes("SIGHUP: audit log"), "the SIGHUP line");
    assert.match(harness.stderr(), /checked and reopened/);
    // The new file exists at once, before any call.
    await Deno.stat(harness.auditLog);
    assert.equal((await harness.call("run_command", { command: "echo two" })).code, "OK");
    const records = await readRecords(harness.auditLog);
    assert.ok(records.some((record) => record.command_raw === "echo two"));
    await assertRotated(harness.auditLog);
  } finally {
    await harness.close();
  }
});

Deno.test("http: SIGHUP through the launcher reopens the log; SIGTERM still stops cleanly after it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-sighup-" });
  try {
    const server = await startCliServer(await writeLoopbackPolicy(dir));
    const client = new Client({ name: "sighup", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const call = async (command: string) =>
      ((await client.callTool({ name: "run_command", arguments: { command } }))
        .structuredContent as {
          code: string;
        }).code;
    assert.equal(await call("echo one"), "OK");
    const auditLog = join(dir, "audit.jsonl");
    await Deno.rename(auditLog, `${auditLog}.1`);
    server.child.kill("SIGHUP");
    await until(() => server.stderr().includes("SIGHUP: audit log"), "the SIGHUP line");
    assert.equal(await call("echo two"), "OK");
    server.child.kill("SIGTERM");
    const status = await server.child.status;
    assert.equal(status.code, 0, server.stderr());
    await client.close().catch(() => {});
    await assertRotated(auditLog);
    const records = await readRecords(auditLog);
    assert.equal(records.at(-1)!.event, "server_stop");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("self-confined (the core in a Worker): SIGHUP reopens the log and the process lives on", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-sighup-worker-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/logs`);
    const auditLog = `${dir}/logs/audit.jsonl`;
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      policyToml(`${dir}/jail`, auditLog, { allow: ["echo"] }),
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--unstable-worker-options",
        MAIN,
        "serve",
        "--policy",
        `${dir}/policy.toml`,
      ],
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      env: serverEnv(dir),
      clearEnv: true,
    }).spawn();
    let stderr = "";
    const pump = (async () => {
      for await (const chunk of child.stderr) stderr += new TextDecoder().decode(chunk);
    })();
    try {
      await until(() => stderr.includes("htmcp: sandbox:"), "startup");
      assert.match(stderr, /permission layer: self-confined/);
      await until(async () => (await readRecords(auditLog)).length > 0, "server_start");
      await Deno.rename(auditLog, `${auditLog}.1`);
      child.kill("SIGHUP");
      await until(() => stderr.includes("SIGHUP: audit log"), "the SIGHUP line");
      await assertRotated(auditLog);
    } finally {
      // Closing stdin is how a stdio client stops its server.
      await child.stdin.close();
      const status = await child.status;
      await pump;
      assert.equal(status.code, 0, stderr);
      assert.match(stderr, /stopped \(stdin closed\)/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
