/**
 * What `serveHttp` refuses to start, and what it warns about loudly: auth off
 * or the localhost bypass where they would expose the shell, OAuth without a
 * usable issuer or state directory, a malformed listen address.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createServerContext } from "../../../src/server/mod.ts";
import { serveHttp, type ServeHttpOptions } from "../../../src/transport/http/mod.ts";
import { parseListen } from "../../../src/transport/http/address.ts";
import { type HarnessOptions, harnessPolicy, withHttp } from "./_harness.ts";
import { prepareJail } from "../../_helpers/jail.ts";

/** Tries to start a server; returns the refusal message, or null if it started (then stops it). */
async function startupVerdict(
  options: HarnessOptions,
  serve: Partial<ServeHttpOptions>,
): Promise<string | null> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-http-start-" });
  await Deno.mkdir(`${dir}/jail`);
  await prepareJail(`${dir}/jail`);
  const policy = harnessPolicy(dir, options);
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  try {
    const started = await serveHttp(built.context, {
      listen: "127.0.0.1:0",
      baseUrl: null,
      adminPin: "plum-7-harbor",
      warn: () => {},
      ...serve,
    });
    if (started.ok) {
      await started.server.shutdown();
      return null;
    }
    return started.message;
  } finally {
    await built.context.close("test");
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("auth mode none is refused on a non-loopback or wildcard listen address", async () => {
  for (const listen of ["0.0.0.0:0", "[::]:0"]) {
    const message = await startupVerdict({ auth: { mode: "none" } }, { listen });
    assert.match(message ?? "", /mode = "none" is refused: the listen address .* is not loopback/);
  }
});

Deno.test("auth mode none is refused behind a public base URL, even on loopback", async () => {
  const message = await startupVerdict({ auth: { mode: "none" } }, {
    baseUrl: "https://mcp.example.com",
  });
  assert.match(
    message ?? "",
    /mode = "none" is refused: the base URL "https:\/\/mcp\.example\.com"/,
  );
});

Deno.test("auth mode none on loopback starts with a loud warning, and serves without a token", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    assert.equal(h.warnings.length, 1);
    assert.match(h.warnings[0] ?? "", /^WARNING: AUTHENTICATION IS OFF/);
    const client = new Client({ name: "local", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(h.mcpUrl));
    const result = await client.callTool({
      name: "run_command",
      arguments: { command: "echo hi" },
    });
    assert.equal((result.structuredContent as { stdout: string }).stdout, "hi\n");
    await client.close();
    // Without OAuth there are no OAuth routes.
    const metadata = await fetch(`${h.url}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(metadata.status, 404);
    await metadata.body?.cancel();
  });
});

Deno.test("the localhost bypass is refused behind a public base URL (a tunnel makes everything loopback)", async () => {
  const message = await startupVerdict({ auth: { allowLocalhostBypass: true } }, {
    baseUrl: "https://mcp.example.com",
  });
  assert.match(message ?? "", /allow_localhost_bypass is refused/);
});

Deno.test("the localhost bypass serves a tokenless loopback caller, with a warning; a bad token is still refused", async () => {
  await withHttp({ auth: { allowLocalhostBypass: true } }, async (h) => {
    assert.match(h.warnings.join("\n"), /allow_localhost_bypass = true/);
    const client = new Client({ name: "local", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(h.mcpUrl));
    const result = await client.callTool({
      name: "run_command",
      arguments: { command: "echo ok" },
    });
    assert.equal((result.structuredContent as { stdout: string }).stdout, "ok\n");
    await client.close();
    const bad = await fetch(h.mcpUrl, {
      method: "POST",
      headers: { authorization: "Bearer forged", "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(bad.status, 401);
    await bad.body?.cancel();
  });
});

Deno.test("OAuth on every interface without a base URL is refused (no issuer clients could use)", async () => {
  const message = await startupVerdict({}, { listen: "0.0.0.0:0" });
  assert.match(message ?? "", /needs \[http\] base_url/);
});

Deno.test("OAuth without a state directory is refused", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/jail`);
  await prepareJail(`${dir}/jail`);
  const policy = { ...harnessPolicy(dir), stateDir: null };
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const started = await serveHttp(built.context, {
    listen: "127.0.0.1:0",
    baseUrl: null,
    adminPin: null,
  });
  await built.context.close("test");
  await Deno.remove(dir, { recursive: true });
  assert.equal(started.ok, false);
  assert.match(started.ok ? "" : started.message, /needs a state directory/);
});

Deno.test("a public base URL without an admin PIN is refused by the authorization server", async () => {
  const message = await startupVerdict({}, { baseUrl: "https://mcp.example.com", adminPin: null });
  assert.match(message ?? "", /HTMCP_OAUTH_ADMIN_PIN must be set/);
});

Deno.test("a malformed listen address and a port in use are refused with one sentence", async () => {
  assert.match(
    await startupVerdict({}, { listen: "localhost" }) ?? "",
    /The listen address "localhost" must be HOST:PORT/,
  );
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const message = await startupVerdict({}, { listen: `127.0.0.1:${busy.addr.port}` });
    assert.match(message ?? "", /^Cannot listen on "127\.0\.0\.1:\d+": /);
  } finally {
    busy.close();
  }
});

Deno.test("parseListen() reads IPv4, IPv6 and names, and refuses the rest", () => {
  assert.deepEqual(parseListen("127.0.0.1:8080"), {
    ok: true,
    address: { host: "127.0.0.1", hostname: "127.0.0.1", port: 8080 },
  });
  assert.deepEqual(parseListen("[::1]:0"), {
    ok: true,
    address: { host: "[::1]", hostname: "::1", port: 0 },
  });
  assert.deepEqual(parseListen("LocalHost:1"), {
    ok: true,
    address: { host: "localhost", hostname: "localhost", port: 1 },
  });
  for (const bad of ["", ":80", "::1:80", "host:99999", "host:", "a b:80", "[zz]:80", "host:-1"]) {
    assert.equal(parseListen(bad).ok, false, bad);
  }
});
