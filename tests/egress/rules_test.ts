/**
 * The egress allowlist predicate, the proxy's request-head reader and the
 * local-address check, case by case (all pure).
 */
import assert from "node:assert/strict";
import {
  findEgressRule,
  isLocalAddress,
  parseEgressRule,
  parseProxyRequest,
} from "../../src/egress/mod.ts";

function rules(...texts: string[]) {
  return texts.map((text) => {
    const parsed = parseEgressRule(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.rule;
  });
}

Deno.test("findEgressRule() matches host and port exactly, names case-insensitively", () => {
  const list = rules("registry.npmjs.org:443", "127.0.0.1:8080", "[::1]:9000");
  assert.equal(findEgressRule(list, "REGISTRY.npmjs.org.", 443)?.text, "registry.npmjs.org:443");
  assert.equal(findEgressRule(list, "registry.npmjs.org", 80), null, "another port");
  assert.equal(findEgressRule(list, "evil-registry.npmjs.org", 443), null);
  assert.equal(findEgressRule(list, "registry.npmjs.org.evil.com", 443), null);
  assert.equal(findEgressRule(list, "127.0.0.1", 8080)?.literal, true);
  assert.equal(findEgressRule(list, "127.1", 8080), null, "no guessing at other spellings");
  assert.equal(findEgressRule(list, "[::1]", 9000)?.text, "[::1]:9000");
});

Deno.test("findEgressRule() lets *.NAME match names below NAME only", () => {
  const list = rules("*.example.com:443");
  assert.ok(findEgressRule(list, "a.example.com", 443));
  assert.ok(findEgressRule(list, "a.b.example.com", 443));
  assert.equal(findEgressRule(list, "example.com", 443), null);
  assert.equal(findEgressRule(list, "badexample.com", 443), null);
  assert.equal(findEgressRule(list, "a.example.com", 8443), null);
});

Deno.test("parseProxyRequest() reads CONNECT and absolute http:// requests", () => {
  assert.deepEqual(parseProxyRequest("CONNECT Example.com:443 HTTP/1.1\r\nHost: example.com:443"), {
    ok: true,
    kind: "connect",
    method: "CONNECT",
    host: "example.com",
    port: 443,
    upstreamHead: null,
  });
  const get = parseProxyRequest(
    "GET http://127.0.0.1:8080/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: x\r\nAccept: */*",
  );
  assert.ok(get.ok);
  assert.equal(get.host, "127.0.0.1");
  assert.equal(get.port, 8080);
  assert.equal(
    get.upstreamHead,
    "GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n",
  );
  const bare = parseProxyRequest("GET http://example.org HTTP/1.0");
  assert.ok(bare.ok);
  assert.equal(bare.port, 80);
  assert.equal(bare.upstreamHead, "GET / HTTP/1.0\r\nConnection: close\r\n\r\n");
});

Deno.test("parseProxyRequest() refuses what it cannot forward, with the status and a reason", () => {
  const cases: [string, number, RegExp][] = [
    ["GET /local HTTP/1.1", 400, /absolute http:\/\/ URL/],
    ["GET https://example.org/ HTTP/1.1", 405, /go through CONNECT/],
    ["CONNECT example.org HTTP/1.1", 400, /CONNECT needs HOST:PORT/],
    ["CONNECT example.org:99999 HTTP/1.1", 400, /CONNECT needs HOST:PORT/],
    ["GET http://user:pw@example.org/ HTTP/1.1", 400, /credentials/],
    ["GET http://example.org/ HTTP/2", 400, /request line/],
    ["GET http://example.org/\r\nHost: x HTTP/1.1", 400, /request line/],
    ["GET http://example.org/ HTTP/1.1\r\nno colon here", 400, /header line/],
  ];
  for (const [head, status, reason] of cases) {
    const parsed = parseProxyRequest(head);
    assert.equal(parsed.ok, false, head);
    if (!parsed.ok) {
      assert.equal(parsed.status, status, head);
      assert.match(parsed.reason, reason, head);
    }
  }
});

Deno.test("isLocalAddress() covers loopback, private, link-local and their IPv6 forms", () => {
  for (
    const ip of [
      "127.0.0.1",
      "127.9.9.9",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "::ffff:127.0.0.1",
      "fd00::1",
      "fe80::1",
    ]
  ) assert.ok(isLocalAddress(ip), ip);
  for (
    const ip of ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"]
  ) {
    assert.ok(!isLocalAddress(ip), ip);
  }
});
