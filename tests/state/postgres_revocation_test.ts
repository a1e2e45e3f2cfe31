/**
 * A revocation is in force on every replica within one second. Two server
 * processes share one PostgreSQL state store behind a real nginx on
 * loopback (the public origin both replicas are configured with, as a
 * fleet behind a load balancer is): the real SDK client completes the
 * built-in OAuth flow through the balancer (which sends the OAuth routes to
 * one replica, as docs/deploy.md says a fleet must), its token is accepted
 * by both replicas (one signing secret, one client list in the database),
 * then `htmcp auth revoke` (run against the database, not against a server)
 * makes both refuse it with `invalid_token`, each within one second.
 */
import assert, { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { LAUNCH, readServingUrl } from "../../scripts/conformance.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { postgresOrSkip } from "../_helpers/postgres.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { freePort, NGINX, startNginx } from "../_helpers/nginx.ts";

const DENO = Deno.execPath();
const PIN = "fleet-7-harbor";

async function output(command: string, args: string[], env: Record<string, string> = {}) {
  const result = await new Deno.Command(command, {
    args,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: result.code, stdout: decode(result.stdout), stderr: decode(result.stderr) };
}

/** POSTs an MCP initialize with the bearer token: 200 accepted, 401 refused. */
async function bearerStatus(url: string, token: string): Promise<{ status: number; www: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "revocation-test", version: "0" },
      },
    }),
  });
  await response.body?.cancel();
  return { status: response.status, www: response.headers.get("www-authenticate") ?? "" };
}

Deno.test("a client revoked through the CLI is refused by every replica sharing PostgreSQL within one second", async () => {
  await Deno.stat(NGINX); // nginx is installed with the test prerequisites: fail loudly without it
  const server = await postgresOrSkip("revocation across replicas");
  if (server === null) return;
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-revoke-fleet-" }));
  const nginxDir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-nginx-" }));
  const children: Deno.ChildProcess[] = [];
  let nginx: { stop(): Promise<void> } | null = null;
  try {
    const url = await server.createDatabase("revoke");
    const lb = freePort();
    await Deno.mkdir(join(dir, "jail"));
    await prepareJail(join(dir, "jail"));
    const policy = join(dir, "policy.toml");
    await Deno.writeTextFile(
      policy,
      [
        `jail_root = "jail"`,
        `[allowlist]`,
        `commands = ["true"]`,
        `[auth]`,
        `mode = "oauth"`,
        `[http]`,
        `base_url = "http://127.0.0.1:${lb}"`,
        `[state]`,
        `backend = "postgres"`,
        "",
      ].join("\n"),
    );
    const env = { HTMCP_STATE_URL: url, HTMCP_OAUTH_ADMIN_PIN: PIN };
    const migrated = await output(DENO, [
      "run",
      "-A",
      LAUNCH,
      "state",
      "migrate",
      "--policy",
      policy,
    ], env);
    equal(migrated.code, 0, migrated.stderr);

    // Each replica binds a port of its own choosing (port 0) and says which:
    // a port picked in advance could be taken by another process meanwhile.
    for (const name of ["a", "b"]) {
      const child = new Deno.Command(DENO, {
        args: ["run", "-A", LAUNCH, "serve", "--policy", policy, "--http", "127.0.0.1:0"],
        // Each replica its own audit log, as in a fleet.
        env: { NO_COLOR: "1", ...env, HTMCP_AUDIT_LOG: join(dir, `audit-${name}.jsonl`) },
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      children.push(child);
    }
    const [portA, portB] = (await Promise.all(children.map((child) => readServingUrl(child))))
      .map((serving) => new URL(serving.listening).port);
    nginx = await startNginx(
      nginxDir,
      lb,
      `  server {
    listen 127.0.0.1:${lb};
    # The OAuth flow (in-memory codes) and /mcp on replica A ...
    location / { proxy_pass http://127.0.0.1:${portA}; }
    # ... and replica B under /b/, for the test to address it.
    location /b/ { proxy_pass http://127.0.0.1:${portB}/; }
  }`,
    );

    const viaA = `http://127.0.0.1:${lb}/mcp`;
    const viaB = `http://127.0.0.1:${lb}/b/mcp`;
    const connection = await connectWithOAuth(new URL(viaA), PIN);
    const token = connection.provider.tokens()?.access_token;
    const clientId = connection.provider.clientInformation()?.client_id;
    await connection.close();
    ok(token !== undefined && clientId !== undefined);

    // One secret and one client list: the token A issued works on B too.
    equal((await bearerStatus(viaA, token)).status, 200);
    equal((await bearerStatus(viaB, token)).status, 200);

    const revoked = await output(
      DENO,
      ["run", "-A", LAUNCH, "auth", "revoke", clientId, "--policy", policy],
      { ...env, HTMCP_AUDIT_LOG: join(dir, "audit-cli.jsonl") },
    );
    equal(revoked.code, 0, revoked.stdout + revoked.stderr);
    const revokedAt = performance.now();

    for (const replica of [viaA, viaB]) {
      let answer = await bearerStatus(replica, token);
      while (answer.status !== 401) {
        equal(answer.status, 200);
        ok(performance.now() - revokedAt < 1_000, `${replica} still accepts the token after 1 s`);
        await new Promise((resolve) => setTimeout(resolve, 25));
        answer = await bearerStatus(replica, token);
      }
      assert.match(answer.www, /error="invalid_token"/);
    }
    // Each replica audited that it applied the revocation it read from the database.
    for (const name of ["a", "b"]) {
      const text = await Deno.readTextFile(join(dir, `audit-${name}.jsonl`));
      ok(text.includes('"client_revocation_applied"'), `replica ${name} did not audit it`);
    }
  } finally {
    await nginx?.stop();
    for (const child of children) {
      try {
        child.kill("SIGTERM");
      } catch {
        // already exited
      }
      await child.status;
    }
    await server.stop();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(nginxDir, { recursive: true });
  }
});
