/**
 * Client ID Metadata Documents in the built-in authorization server, against
 * a real document server on 127.0.0.1: an allowlisted document is fetched,
 * its client completes the whole flow, and its redirect URIs are enforced; a
 * mismatched, oversized, slow, redirected or not-allowlisted document is
 * refused within its bounds, audited, and leaves no client behind.
 */
import assert from "node:assert/strict";
import {
  type AuthFixture,
  authorizeGet,
  authorizeParams,
  obtainToken,
  pkce,
  REDIRECT,
  withAuth,
} from "./_fixtures.ts";
import { CLIENT_METADATA_TIMEOUT_MS } from "../../src/auth/server/client_metadata.ts";

interface DocServer {
  readonly origin: string;
  /** Paths requested so far. */
  readonly hits: string[];
  close(): Promise<void>;
}

function startDocServer(): DocServer {
  const hits: string[] = [];
  const controller = new AbortController();
  let origin = "";
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen: () => {},
  }, async (request) => {
    const path = new URL(request.url).pathname;
    hits.push(path);
    const doc = (body: unknown) =>
      new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
    const self = `${origin}${path}`;
    switch (path) {
      case "/good.json":
      case "/other.json":
        return doc({ client_id: self, client_name: "Doc Client", redirect_uris: [REDIRECT] });
      case "/mismatch.json":
        return doc({ client_id: `${origin}/good.json`, redirect_uris: [REDIRECT] });
      case "/big.json":
        return doc({ client_id: self, redirect_uris: [REDIRECT], pad: "x".repeat(20_000) });
      case "/redirect.json":
        return new Response(null, { status: 302, headers: { location: `${origin}/good.json` } });
      case "/slow.json": {
        // Longer than the fetch bound; ends early when the server closes.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, CLIENT_METADATA_TIMEOUT_MS * 3);
          controller.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          });
        });
        return doc({ client_id: self, redirect_uris: [REDIRECT] });
      }
      default:
        return new Response("not found", { status: 404 });
    }
  });
  origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    origin,
    hits,
    async close() {
      controller.abort();
      await server.finished;
    },
  };
}

async function withDocs(
  allow: (origin: string) => string[],
  fn: (f: AuthFixture, docs: DocServer) => Promise<void>,
): Promise<void> {
  const docs = startDocServer();
  try {
    await withAuth(
      {
        policyOverrides: {
          auth: {
            mode: "oauth",
            allowLocalhostBypass: false,
            allowPlainPkce: false,
            accessTokenTtlSeconds: 3600,
            clientIdMetadataAllow: allow(docs.origin),
            external: null,
          },
        },
      },
      (f) => fn(f, docs),
    );
  } finally {
    await docs.close();
  }
}

async function refusal(
  f: AuthFixture,
  clientId: string,
): Promise<{ status: number; reason: unknown }> {
  const response = await authorizeGet(f.auth, authorizeParams(clientId, pkce().challenge));
  await response.body?.cancel();
  const refused = (await f.events()).filter((e) => e.event === "client_metadata_refused");
  assert.ok(!(await f.events()).some((e) => e.event === "client_registered"));
  return { status: response.status, reason: refused.at(-1)?.reason };
}

Deno.test("an allowlisted client-id metadata document is fetched, its client gets a token, and its redirect URIs are enforced", async () => {
  await withDocs((origin) => ["127.0.0.1", `${origin}/unused.json`], async (f, docs) => {
    const clientId = `${docs.origin}/good.json`;
    const wrongRedirect = await authorizeGet(
      f.auth,
      authorizeParams(clientId, pkce().challenge, { redirect_uri: "http://127.0.0.1:1/cb" }),
    );
    assert.equal(wrongRedirect.status, 400);
    assert.match(await wrongRedirect.text(), /is not registered for this client/);

    const { token, body } = await obtainToken(f.auth, { clientId });
    assert.equal(typeof token, "string");
    assert.equal(body.token_type, "Bearer");
    const registered = (await f.events()).filter((e) => e.event === "client_registered");
    assert.deepEqual(registered.map((e) => [e.client_id, e.client_name]), [[
      clientId,
      "Doc Client",
    ]]);
    // Fetched once: the pending client is reused until approval, then the record.
    assert.deepEqual(docs.hits, ["/good.json"]);
  });
});

Deno.test("a document whose client_id is another URL is refused", async () => {
  await withDocs(() => ["127.0.0.1"], async (f, docs) => {
    assert.deepEqual(await refusal(f, `${docs.origin}/mismatch.json`), {
      status: 400,
      reason: "client_id_mismatch",
    });
  });
});

Deno.test("an oversized document is refused at the registration byte limit", async () => {
  await withDocs(() => ["127.0.0.1"], async (f, docs) => {
    assert.deepEqual(await refusal(f, `${docs.origin}/big.json`), {
      status: 400,
      reason: "too_large",
    });
  });
});

Deno.test("a slow document is refused when the fetch bound runs out", async () => {
  await withDocs(() => ["127.0.0.1"], async (f, docs) => {
    const started = performance.now();
    assert.deepEqual(await refusal(f, `${docs.origin}/slow.json`), {
      status: 400,
      reason: "timeout",
    });
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= CLIENT_METADATA_TIMEOUT_MS - 100, `refused after ${elapsed} ms`);
    assert.ok(elapsed < CLIENT_METADATA_TIMEOUT_MS * 2, `refused after ${elapsed} ms`);
  });
});

Deno.test("a redirecting document is refused (no redirects are followed)", async () => {
  await withDocs(() => ["127.0.0.1"], async (f, docs) => {
    assert.deepEqual(await refusal(f, `${docs.origin}/redirect.json`), {
      status: 400,
      reason: "status",
    });
    assert.deepEqual(docs.hits, ["/redirect.json"]);
  });
});

Deno.test("a client-id URL outside the allowlist is never fetched", async () => {
  await withDocs((origin) => [`${origin}/good.json`], async (f, docs) => {
    assert.deepEqual(await refusal(f, `${docs.origin}/other.json`), {
      status: 400,
      reason: "not_allowlisted",
    });
    assert.deepEqual(docs.hits, []);
  });
});

Deno.test("without an allowlist a URL client_id is just an unknown client", async () => {
  await withDocs(() => [], async (f, docs) => {
    const response = await authorizeGet(
      f.auth,
      authorizeParams(`${docs.origin}/good.json`, pkce().challenge),
    );
    assert.equal(response.status, 400);
    assert.match(await response.text(), /No registered client/);
    assert.deepEqual(docs.hits, []);
    assert.ok(!(await f.events()).some((e) => e.event === "client_metadata_refused"));
  });
});
