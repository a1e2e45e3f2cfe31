/**
 * `/healthz` and `/readyz` on the real HTTP server: answered without a
 * token and for any Host (a kubelet probes the pod IP), booleans only (no
 * path, URL or error text in the body), 503 with the failing check named
 * when the replica cannot serve, and no more than one computation per
 * cache interval however many probes arrive.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { withHttp } from "../transport/http/_harness.ts";
import { createReadiness, jwksProbeFor } from "../../src/health/mod.ts";
import type { Policy } from "../../src/config/types.ts";

async function get(url: string, method = "GET") {
  const response = await fetch(url, { method });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** A raw HTTP/1.1 GET with the Host given (fetch will not send a foreign one). */
async function getWithHost(url: string, path: string, host: string) {
  const port = Number(new URL(url).port);
  const connection = await Deno.connect({ hostname: "127.0.0.1", port });
  const request = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
  await connection.write(new TextEncoder().encode(request));
  let text = "";
  const buffer = new Uint8Array(16 * 1024);
  for (;;) {
    const read = await connection.read(buffer);
    if (read === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, read));
  }
  connection.close();
  const status = Number(text.split(" ")[1]);
  return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
}

Deno.test("/healthz answers 200 {status: ok} without a token, for a foreign Host too", async () => {
  await withHttp({}, async (h) => {
    const plain = await get(`${h.url}/healthz`);
    equal(plain.status, 200);
    deepEqual(JSON.parse(plain.text), { status: "ok" });
    equal(plain.headers.get("cache-control"), "no-store");
    const foreign = await getWithHost(h.url, "/healthz", "10.1.2.3:8080");
    equal(foreign.status, 200);
    ok(foreign.body.includes('{"status":"ok"}'), foreign.body);
    // The same foreign Host is still refused everywhere else.
    equal((await getWithHost(h.url, "/mcp", "10.1.2.3:8080")).status, 403);
    equal((await get(`${h.url}/healthz`, "POST")).status, 405);
    const head = await get(`${h.url}/healthz`, "HEAD");
    equal(head.status, 200);
    equal(head.text, "");
  });
});

Deno.test("/readyz lists each check as a boolean, and nothing else: no path, no URL", async () => {
  await withHttp({}, async (h) => {
    equal((await getWithHost(h.url, "/readyz", "10.1.2.3:8080")).status, 200);
    const ready = await get(`${h.url}/readyz`);
    equal(ready.status, 200, ready.text);
    deepEqual(JSON.parse(ready.text), {
      status: "ready",
      checks: { policy: true, audit: true, sandbox: true, store: true },
    });
    ok(!ready.text.includes("/"), ready.text);
    ok(!ready.text.includes(h.dir), ready.text);
  });
});

Deno.test("/readyz answers 503 naming the audit check when the audit log cannot be opened", async () => {
  await withHttp({}, async (h) => {
    equal((await get(`${h.url}/readyz`)).status, 200);
    // The log's file is gone: the writer would fail (it never recreates a log it had open).
    await Deno.remove(h.auditPath);
    // Past the one-second report cache (the cache is the point: see the flood test).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const unready = await get(`${h.url}/readyz`);
    equal(unready.status, 503, unready.text);
    const body = JSON.parse(unready.text);
    equal(body.status, "not_ready");
    equal(body.checks.audit, false);
    equal(body.checks.policy, true);
    ok(!unready.text.includes(h.dir));
  });
});

Deno.test("a flood of readiness probes computes the report once per interval", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-ready-" });
  try {
    const auditLog = join(dir, "audit.jsonl");
    await Deno.writeTextFile(auditLog, "");
    let fetches = 0;
    let clock = 0;
    const context = {
      policy: { auditLog, stateDir: null } as unknown as Policy,
      executor: {
        describe: () => ({ requestedMode: "bwrap", mode: "bwrap", probes: [{ ok: true }] }),
      } as never,
    };
    const readiness = createReadiness(context, {
      jwks: () => {
        fetches++;
        return Promise.resolve(true);
      },
      cacheMs: 1_000,
      now: () => clock,
    });
    const reports = await Promise.all(Array.from({ length: 200 }, () => readiness()));
    equal(fetches, 1);
    ok(reports.every((report) => report.ready && report.checks.jwks === true));
    clock = 999;
    await readiness();
    equal(fetches, 1);
    clock = 1_000;
    await readiness();
    equal(fetches, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the JWKS check of external mode is true for a key set and false for an error or an empty set", async () => {
  let answer: { status: number; body: unknown } = { status: 200, body: { keys: [{ kty: "EC" }] } };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(JSON.stringify(answer.body), { status: answer.status }),
  );
  try {
    const jwksUri = `http://127.0.0.1:${server.addr.port}/jwks`;
    const policy = {
      auth: { mode: "external", external: { issuer: "http://127.0.0.1/", jwksUri } },
    } as unknown as Policy;
    const probe = jwksProbeFor(policy);
    ok(probe !== null);
    equal(await probe(), true);
    answer = { status: 500, body: {} };
    equal(await probe(), false);
    answer = { status: 200, body: { keys: [] } };
    equal(await probe(), false);
    equal(jwksProbeFor({ auth: { mode: "oauth", external: null } } as unknown as Policy), null);
  } finally {
    await server.shutdown();
  }
});
