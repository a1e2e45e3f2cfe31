/**
 * DNS-rebinding protection: a foreign `Host` or `Origin` gets 403 with a JSON
 * error on every route, before authentication or parsing, and is audited; the
 * server's own names, the base URL's host, loopback names on a loopback
 * listener and the operator's extra entries are accepted.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { createHostCheck } from "../../../src/transport/http/host_check.ts";
import { parseListen } from "../../../src/transport/http/address.ts";
import { initializeBody, MCP_POST_HEADERS, withHttp } from "./_harness.ts";

/** One raw HTTP/1.1 request with exactly these headers; resolves the whole answer. */
function rawRequest(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (data) => {
      text += data.toString("utf8");
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
    socket.write(head);
  });
}

function statusOf(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
}

Deno.test("a foreign Host gets 403 forbidden_host on every route, before auth, and is audited (repeats as a count)", async () => {
  await withHttp({}, async (h) => {
    const port = Number(new URL(h.url).port);
    for (const path of ["/mcp", "/.well-known/oauth-authorization-server", "/register"]) {
      const answer = await rawRequest(
        port,
        `GET ${path} HTTP/1.1\r\nHost: evil.example:${port}\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(statusOf(answer), 403, path);
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
      assert.equal(body.error, "forbidden_host");
      assert.match(body.error_description, /"evil\.example:\d+" is not this server/);
    }
    const own = await rawRequest(
      port,
      `GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(statusOf(own), 200);
    // One record per source and reason per interval; the repeats are counted.
    const audited = await h.events("http_forbidden");
    assert.deepEqual(audited.map((e) => [e.path, e.header]), [["/mcp", "host"]]);
    await h.server.shutdown();
    const counted = await h.events("refusals_aggregated");
    assert.deepEqual(counted.map((e) => [e.refused_event, e.count]), [["http_forbidden", 2]]);
  });
});

Deno.test("a foreign Origin gets 403 forbidden_origin; the server's own origin and no Origin pass", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const post = (origin: string | null) =>
      fetch(h.mcpUrl, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, ...(origin === null ? {} : { origin }) },
        body: initializeBody(),
      });
    for (
      const origin of ["http://evil.example", "null", `http://127.0.0.1.evil.example`, "file://"]
    ) {
      const response = await post(origin);
      assert.equal(response.status, 403, origin);
      assert.equal((await response.json()).error, "forbidden_origin", origin);
    }
    for (const origin of [null, h.url, h.url.replace("127.0.0.1", "localhost")]) {
      const response = await post(origin);
      assert.equal(response.status, 200, String(origin));
      await response.body?.cancel();
    }
    assert.equal((await h.events("http_forbidden")).length, 4);
    // Nothing was created for the refused requests: no session, no tool call.
    assert.equal((await h.records()).filter((r) => r.kind === "attempt").length, 0);
  });
});

Deno.test("createHostCheck() accepts the configured names and nothing else", () => {
  const address = parseListen("0.0.0.0:8080");
  if (!address.ok) throw new Error(address.message);
  const check = createHostCheck({
    address: address.address,
    port: 8080,
    tls: false,
    baseUrl: "https://mcp.example.com",
    allowedOrigins: ["https://app.example.org"],
    allowedHosts: ["internal.lan", "proxy.lan:9000"],
  });
  const verdict = (host: string, origin?: string) =>
    check.check(
      new Request("http://x/mcp", { headers: { host, ...(origin ? { origin } : {}) } }),
    ).ok;
  assert.equal(verdict("mcp.example.com"), true);
  assert.equal(verdict("mcp.example.com:443"), true);
  assert.equal(verdict("MCP.EXAMPLE.COM"), true);
  assert.equal(verdict("mcp.example.com:8443"), false);
  assert.equal(verdict("localhost:8080"), true);
  assert.equal(verdict("[::1]:8080"), true);
  assert.equal(verdict("0.0.0.0:8080"), false);
  assert.equal(verdict("internal.lan:1234"), true);
  assert.equal(verdict("proxy.lan:9000"), true);
  assert.equal(verdict("proxy.lan:9001"), false);
  assert.equal(verdict("evil.example"), false);
  assert.equal(verdict("mcp.example.com.evil.example"), false);
  assert.equal(verdict("mcp.example.com", "https://mcp.example.com"), true);
  assert.equal(verdict("mcp.example.com", "https://mcp.example.com:443"), true);
  assert.equal(verdict("mcp.example.com", "http://mcp.example.com"), false);
  assert.equal(verdict("mcp.example.com", "https://app.example.org"), true);
  assert.equal(verdict("mcp.example.com", "https://evil.example"), false);
  assert.equal(verdict("mcp.example.com", "null"), false);
});

Deno.test("createHostCheck() on a non-loopback listen without base URL does not accept loopback names", () => {
  const address = parseListen("192.168.1.10:8080");
  if (!address.ok) throw new Error(address.message);
  const check = createHostCheck({
    address: address.address,
    port: 8080,
    tls: true,
    baseUrl: null,
    allowedOrigins: [],
    allowedHosts: [],
  });
  const ok = (host: string) => check.check(new Request("http://x/", { headers: { host } })).ok;
  assert.equal(ok("192.168.1.10:8080"), true);
  assert.equal(ok("localhost:8080"), false);
  assert.equal(ok("192.168.1.10"), false);
});
