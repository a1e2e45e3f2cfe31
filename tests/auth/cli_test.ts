/**
 * `htmcp auth clients` and `htmcp auth revoke`: the operator's CLI reads the
 * policy with the real loader, and a revocation takes effect on the running
 * server's very next bearer check.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "../../src/cli/auth.ts";
import { AuditLog } from "../../src/audit/mod.ts";
import { createAuthorizationServer } from "../../src/auth/mod.ts";
import { loadPolicy } from "../../src/config/mod.ts";
import { BASE, mcpRequest, obtainToken, PIN } from "./_fixtures.ts";

const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));

/** A real policy file with a jail, an audit log and a state dir, and a server on it. */
async function withServer(
  fn: (ctx: {
    dir: string;
    policyFile: string;
    auditPath: string;
    auth: Awaited<ReturnType<typeof start>>["auth"];
    closeLog(): Promise<void>;
  }) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-auth-cli-" }));
  await Deno.mkdir(join(dir, "jail"));
  const policyFile = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policyFile,
    'jail_root = "jail"\naudit_log = "audit.jsonl"\nstate_dir = "state"\n',
  );
  const { auth, log } = await start(policyFile);
  let closed = false;
  const closeLog = async () => {
    if (!closed) await log.close();
    closed = true;
  };
  try {
    await fn({ dir, policyFile, auditPath: join(dir, "audit.jsonl"), auth, closeLog });
  } finally {
    await closeLog();
    await Deno.remove(dir, { recursive: true });
  }
}

async function start(policyFile: string) {
  const loaded = await loadPolicy({ policyFile, env: {} });
  if (!loaded.ok) throw new Error(loaded.message);
  const policy = loaded.policy;
  const opened = await AuditLog.open(policy.auditLog, "closed", { redact: (s) => s });
  if (!opened.ok) throw new Error(opened.reason);
  const created = await createAuthorizationServer({
    policy,
    baseUrl: BASE,
    audit: opened.log,
    stateDir: policy.stateDir as string,
    adminPin: PIN,
  });
  if (!created.ok) throw new Error(created.message);
  return { auth: created.auth, log: opened.log };
}

async function auditEvents(path: string): Promise<Record<string, unknown>[]> {
  return (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l)).filter((r) => r.kind === "event");
}

Deno.test("auth revoke (run()) stops the client's token at the running server's next request", async () => {
  await withServer(async ({ policyFile, auditPath, auth }) => {
    const { clientId, token } = await obtainToken(auth);
    const kept = await obtainToken(auth);
    assert.ok((await auth.verifyBearer(mcpRequest(`Bearer ${token}`))).ok);

    assert.equal(await run(["revoke", clientId, "--policy", policyFile]), 0);

    const after = await auth.verifyBearer(mcpRequest(`Bearer ${token}`));
    assert.equal(after.ok, false);
    if (!after.ok) {
      assert.equal(after.reason, "client_revoked");
      assert.equal(after.response.status, 401);
      assert.match(after.response.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    }
    assert.ok((await auth.verifyBearer(mcpRequest(`Bearer ${kept.token}`))).ok);
    // The command records the revocation it made; the server, that it applied it.
    const events = await auditEvents(auditPath);
    const revoked = events.filter((e) => e.event === "client_revoked");
    assert.deepEqual(revoked.map((e) => e.client_id), [clientId]);
    const applied = events.filter((e) => e.event === "client_revocation_applied");
    assert.deepEqual(applied.map((e) => e.client_id), [clientId]);
    // Revoking again, or an unknown id, fails with exit 1.
    assert.equal(await run(["revoke", clientId, "--policy", policyFile]), 1);
    assert.equal(await run(["revoke", "htmcp-nope", "--policy", policyFile]), 1);
  });
});

Deno.test("auth clients lists approved clients; auth revoke audits itself when no server runs", async () => {
  await withServer(async ({ policyFile, auditPath, auth, closeLog }) => {
    const { clientId } = await obtainToken(auth);
    await closeLog(); // the server stops: its audit lock is released
    const cli = async (...args: string[]) => {
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", "--quiet", MAIN, "auth", ...args],
        clearEnv: true,
        env: {
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          HOME: Deno.env.get("HOME") ?? "/root",
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const decode = (b: Uint8Array) => new TextDecoder().decode(b);
      return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
    };
    const listed = await cli("clients", "--policy", policyFile);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(
      listed.stdout,
      new RegExp(
        `^${clientId}  approved .* scopes any {2}redirect 127\\.0\\.0\\.1:45123 {2}name "Test Client"$`,
        "m",
      ),
    );
    const json = await cli("clients", "--json", "--policy", policyFile);
    assert.deepEqual(JSON.parse(json.stdout).map((c: { client_id: string }) => c.client_id), [
      clientId,
    ]);

    const revoked = await cli("revoke", clientId, "--policy", policyFile);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /Revoked OAuth client/);
    const events = (await auditEvents(auditPath)).filter((e) => e.event === "client_revoked");
    assert.deepEqual(events.map((e) => e.client_id), [clientId]);

    const empty = await cli("clients", "--policy", policyFile);
    assert.equal(empty.stdout.trim(), "No approved OAuth clients.");
    assert.equal((await cli("revoke", "--policy", policyFile)).code, 2);
    assert.equal((await cli("frobnicate")).code, 2);
  });
});
