/**
 * `max_http_request_bytes` through real HTTP: a declared oversize is refused
 * from the headers, a chunked oversize is cut off as it streams, a body of
 * exactly the limit with multi-byte UTF-8 is accepted intact, `/mcp`
 * authenticates before reading, registration keeps its own smaller limit, and
 * every refusal is audited without the body.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { initializeBody, MCP_POST_HEADERS, readRpc, withHttp } from "./_harness.ts";

const LIMIT = 4096;

/** A body stream that sends `total` bytes in `chunk`-sized pieces, counting what was pulled. */
function slowBody(
  total: number,
  chunk = 1024,
): { stream: ReadableStream<Uint8Array>; sent: () => number } {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) {
        controller.close();
        return;
      }
      const size = Math.min(chunk, total - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
  return { stream, sent: () => sent };
}

/**
 * Sends raw HTTP/1.1 bytes and collects the answer until `done(text)` says it
 * is complete (or 5 s pass), then drops the connection: the request body may
 * stay unfinished on purpose.
 */
function rawExchange(
  port: number,
  request: string,
  done: (text: string) => boolean,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(finish, 5_000);
    socket.on("data", (data) => {
      text += data.toString("utf8");
      if (done(text)) finish();
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(request);
  });
}

Deno.test("a Content-Length above max_http_request_bytes gets 413 before any byte is read, and is audited", async () => {
  await withHttp({ auth: { mode: "none" }, http: { maxRequestBytes: LIMIT } }, async (h) => {
    const port = Number(new URL(h.url).port);
    // The body is never sent: the server must answer from the headers alone.
    const answer = await rawExchange(
      port,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n`,
      (text) => text.endsWith("}"),
    );
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.ok(answer.endsWith(`{"error":"request_too_large","limit":${LIMIT}}`), answer);
    for (const path of ["/mcp", "/register", "/nowhere"]) {
      const response = await fetch(`${h.url}${path}?access_token=secret-in-query`, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS },
        body: "x".repeat(LIMIT + 1),
      });
      assert.equal(response.status, 413, path);
      assert.deepEqual(await response.json(), { error: "request_too_large", limit: LIMIT });
    }
    const rejected = await h.events("http_rejected");
    assert.equal(rejected.length, 4);
    // policy_hash is the server's policy identity, checked in tests/cli/policy_identity_test.ts.
    assert.match(String(rejected[0]?.policy_hash), /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(
      { ...rejected[0], seq: 0, ts: "", prev: "", writer: "", policy_hash: "" },
      {
        seq: 0,
        ts: "",
        prev: "",
        writer: "",
        policy_hash: "",
        kind: "event",
        event: "http_rejected",
        method: "POST",
        path: "/mcp",
        declared_bytes: 999999999,
        observed_bytes: null,
        limit: LIMIT,
        status: 413,
      },
    );
    assert.equal(rejected[2]?.path, "/register");
    assert.ok(!JSON.stringify(rejected).includes("secret-in-query"), "never the query string");
    assert.ok(!JSON.stringify(rejected).includes("xxxx"), "never the body");
  });
});

Deno.test("a chunked body is counted as it streams and cut off at the limit with 413", async () => {
  await withHttp({ auth: { mode: "none" }, http: { maxRequestBytes: LIMIT } }, async (h) => {
    const body = slowBody(1024 * 1024);
    const response = await fetch(h.mcpUrl, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS },
      body: body.stream,
    });
    assert.equal(response.status, 413);
    assert.deepEqual(await response.json(), { error: "request_too_large", limit: LIMIT });
    const rejected = await h.events("http_rejected");
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]?.declared_bytes, null);
    assert.ok((rejected[0]?.observed_bytes as number) > LIMIT);
    assert.ok((rejected[0]?.observed_bytes as number) <= LIMIT + 1024 * 64);
  });
});

Deno.test("a body of exactly the limit, with multi-byte UTF-8 split across chunks, reaches the tool intact", async () => {
  await withHttp({ auth: { mode: "none" }, http: { maxRequestBytes: LIMIT } }, async (h) => {
    const init = await fetch(h.mcpUrl, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS },
      body: initializeBody(),
    });
    const sessionId = init.headers.get("mcp-session-id") as string;
    await init.body?.cancel();
    const headers = {
      ...MCP_POST_HEADERS,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    };
    await (await fetch(h.mcpUrl, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    })).body?.cancel();

    const word = "grüße-😀-日本";
    const call = (padding: number) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "run_command", arguments: { command: `echo ${word}` } },
      }) + " ".repeat(padding);
    const base = new TextEncoder().encode(call(0)).byteLength;
    const exact = new TextEncoder().encode(call(LIMIT - base));
    assert.equal(exact.byteLength, LIMIT);
    // Split inside the 4-byte emoji so a per-chunk decoder would mangle it.
    const cut = exact.indexOf(0xf0) + 2;
    const chunks = [exact.slice(0, cut), exact.slice(cut)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(next);
      },
    });
    const accepted = await fetch(h.mcpUrl, { method: "POST", headers, body: stream });
    assert.equal(accepted.status, 200);
    const message = await readRpc(accepted) as {
      result: { structuredContent: { stdout: string } };
    };
    assert.equal(message.result.structuredContent.stdout, `${word}\n`);

    const over = await fetch(h.mcpUrl, {
      method: "POST",
      headers,
      body: new TextEncoder().encode(call(LIMIT - base + 1)),
    });
    assert.equal(over.status, 413);
    await over.body?.cancel();
  });
});

Deno.test("/mcp authenticates before reading the body: a tokenless unfinished upload gets 401 at once", async () => {
  await withHttp({ http: { maxRequestBytes: LIMIT } }, async (h) => {
    const port = Number(new URL(h.url).port);
    const started = performance.now();
    // One chunk of a chunked body, then nothing: reading the body would hang.
    const answer = await rawExchange(
      port,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
      (text) => text.includes("invalid_token") && text.endsWith("}"),
    );
    assert.match(answer, /^HTTP\/1\.1 401 /);
    assert.ok(performance.now() - started < 4_000, "answered without waiting for the body");
  });
});

Deno.test("registration keeps its own smaller limit beneath the request limit, which is checked first", async () => {
  await withHttp({ http: { maxRequestBytes: LIMIT, maxRegistrationBytes: 1024 } }, async (h) => {
    const metadata = (padding: number) =>
      JSON.stringify({
        client_name: "x".repeat(padding),
        redirect_uris: ["http://127.0.0.1:45123/callback"],
      });
    // Between the two limits: the registration endpoint refuses it itself.
    const middle = await fetch(`${h.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: metadata(2000),
    });
    assert.equal(middle.status, 413);
    const middleBody = await middle.json();
    assert.equal(middleBody.error, "request_too_large");
    assert.match(middleBody.error_description, /1024 bytes/);

    // A declared length above the request limit: the transport refuses it
    // before the registration endpoint runs (the transport's own error shape).
    const declared = await fetch(`${h.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: metadata(LIMIT * 2),
    });
    assert.equal(declared.status, 413);
    assert.deepEqual(await declared.json(), { error: "request_too_large", limit: LIMIT });

    // Streamed without a length: cut off by the smaller registration limit.
    const stream = slowBody(LIMIT * 8, 512);
    const over = await fetch(`${h.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream.stream,
    });
    assert.equal(over.status, 413);
    await over.body?.cancel();
    const rejected = await h.events("http_rejected");
    assert.deepEqual(rejected.map((e) => [e.path, e.limit]), [
      ["/register", 1024],
      ["/register", LIMIT],
      ["/register", 1024],
    ]);
  });
});
