/**
 * TLS from `[http] tls_cert`/`tls_key`, and the externally visible base URL:
 * the issuer, the resource and the accepted Host all follow `base_url`, while
 * the server still answers on its own listen address.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { join } from "node:path";
import { withHttp } from "./_harness.ts";

const OPENSSL = (() => {
  try {
    return Deno.statSync("/usr/bin/openssl").isFile;
  } catch {
    return false;
  }
})();

async function selfSignedCert(dir: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const out = await new Deno.Command("/usr/bin/openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-addext",
      "basicConstraints=critical,CA:FALSE",
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return { cert, key };
}

Deno.test({
  name: "with tls_cert and tls_key the server speaks HTTPS and its issuer is https",
  ignore: !OPENSSL,
  async fn() {
    const certDir = await Deno.makeTempDir({ prefix: "htmcp-tls-" });
    try {
      const { cert, key } = await selfSignedCert(certDir);
      await withHttp({ http: { tlsCert: cert, tlsKey: key } }, async (h) => {
        assert.match(h.url, /^https:\/\/127\.0\.0\.1:\d+$/);
        const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(cert)] });
        try {
          const response = await fetch(`${h.url}/.well-known/oauth-protected-resource/mcp`, {
            client,
          });
          const metadata = await response.json();
          assert.equal(response.status, 200);
          assert.equal(metadata.resource, `${h.url}/mcp`);
          const unauthenticated = await fetch(h.mcpUrl, { method: "POST", body: "{}", client });
          assert.equal(unauthenticated.status, 401);
          await unauthenticated.body?.cancel();
        } finally {
          client.close();
        }
        // Plain HTTP to the TLS port gets no MCP answer.
        await assert.rejects(async () => {
          const plain = await fetch(h.url.replace("https:", "http:") + "/mcp");
          await plain.body?.cancel();
        });
      });
    } finally {
      await Deno.remove(certDir, { recursive: true });
    }
  },
});

/** GETs `path` with a chosen Host header over a raw connection; returns status and body. */
function getWithHost(port: number, path: string, host: string): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (data) => {
      text += data.toString("utf8");
    });
    socket.on("error", reject);
    socket.on("close", () =>
      resolve([
        Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
        text.slice(text.indexOf("\r\n\r\n") + 4),
      ]));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

Deno.test("base_url is the issuer and resource, and its host is accepted beside the listen address", async () => {
  await withHttp({ baseUrl: "https://mcp.example.com" }, async (h) => {
    assert.equal(h.server.baseUrl, "https://mcp.example.com");
    const port = Number(new URL(h.url).port);
    const path = "/.well-known/oauth-protected-resource/mcp";
    const [status, body] = await getWithHost(port, path, "mcp.example.com");
    assert.equal(status, 200);
    const metadata = JSON.parse(body);
    assert.equal(metadata.resource, "https://mcp.example.com/mcp");
    assert.deepEqual(metadata.authorization_servers, ["https://mcp.example.com"]);
    const [asStatus, asBody] = await getWithHost(
      port,
      "/.well-known/oauth-authorization-server",
      "mcp.example.com:443",
    );
    assert.equal(asStatus, 200);
    assert.equal(JSON.parse(asBody).issuer, "https://mcp.example.com");
    assert.equal((await getWithHost(port, path, `127.0.0.1:${port}`))[0], 200);
    assert.equal((await getWithHost(port, path, "other.example.com"))[0], 403);
    // The 401 challenge points at the public metadata URL.
    const challenge = await fetch(h.mcpUrl, { method: "POST", body: "{}" });
    await challenge.body?.cancel();
    assert.match(
      challenge.headers.get("www-authenticate") ?? "",
      /resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
  });
});
