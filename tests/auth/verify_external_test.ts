/**
 * The external verifier against a real key-set server on 127.0.0.1 (the
 * end-to-end test uses a real OpenID provider; this one controls the key set
 * and the clock): a rotated key is picked up after the cool-down, never
 * before; an unreachable key set is asked at most once per cool-down however
 * many tokens arrive; scopes come from `scope` or `scp`; profiles match
 * string and array claims and nothing inherited.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { createExternalVerifier } from "../../src/auth/bearer/verify_external.ts";
import type { ExternalAuthSettings } from "../../src/config/types.ts";

const RESOURCE = "http://127.0.0.1:9/mcp";

interface KeyServer {
  readonly url: string;
  hits: number;
  keys: JWK[];
  failing: boolean;
  close(): Promise<void>;
}

function startKeyServer(): KeyServer {
  const controller = new AbortController();
  const state = {
    url: "",
    hits: 0,
    keys: [] as JWK[],
    failing: false,
    close: async () => {
      controller.abort();
      await server.finished;
    },
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen: () => {},
  }, () => {
    state.hits++;
    if (state.failing) return new Response("down", { status: 503 });
    return Response.json({ keys: state.keys });
  });
  state.url = `http://127.0.0.1:${server.addr.port}/jwks`;
  return state;
}

async function key(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...await exportJWK(publicKey), kid, alg: "ES256", use: "sig" };
  const sign = (claims: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: "http://127.0.0.1:8/issuer",
      aud: RESOURCE,
      sub: "alice",
      client_id: "agent",
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 300,
      scope: "shell:read shell:execute",
      ...claims,
    }).setProtectedHeader({ alg: "ES256", typ: "application/at+jwt", kid }).sign(privateKey);
  };
  return { jwk, sign };
}

function settings(
  jwksUri: string,
  extra: Partial<ExternalAuthSettings> = {},
): ExternalAuthSettings {
  return {
    issuer: "http://127.0.0.1:8/issuer",
    audience: null,
    jwksUri,
    algorithms: ["ES256"],
    jwksCooldownSeconds: 1,
    scopeClaim: null,
    introspection: null,
    profiles: null,
    ...extra,
  };
}

async function withKeys(fn: (server: KeyServer) => Promise<void>): Promise<void> {
  const server = startKeyServer();
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

Deno.test("a rotated signing key is accepted after the cool-down, with one fetch, and not before", async () => {
  await withKeys(async (server) => {
    const a = await key("a");
    const b = await key("b");
    server.keys = [a.jwk];
    const verifier = createExternalVerifier({
      settings: settings(server.url),
      resource: RESOURCE,
      introspectionSecret: null,
      now: Date.now,
    });
    assert.equal((await verifier.verify(await a.sign())).ok, true);
    assert.equal(server.hits, 1);
    server.keys = [a.jwk, b.jwk];
    const early = await verifier.verify(await b.sign());
    assert.deepEqual(early, { ok: false, reason: "bad_signature", clientId: null });
    assert.equal(server.hits, 1, "inside the cool-down the unknown kid caused no fetch");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const results = await Promise.all(
      Array.from({ length: 10 }, async () => verifier.verify(await b.sign())),
    );
    assert.ok(results.every((r) => r.ok), JSON.stringify(results[0]));
    assert.equal(server.hits, 2, "ten concurrent tokens with the new kid shared one fetch");
  });
});

Deno.test("an unreachable key set is asked at most once per cool-down under a flood", async () => {
  await withKeys(async (server) => {
    server.failing = true;
    const a = await key("a");
    const verifier = createExternalVerifier({
      settings: settings(server.url),
      resource: RESOURCE,
      introspectionSecret: null,
      now: Date.now,
    });
    const token = await a.sign();
    const started = performance.now();
    const reasons = new Set<string>();
    // Bounded: 40 tokens in sequence, well inside one second.
    for (let i = 0; i < 40 && performance.now() - started < 900; i++) {
      const result = await verifier.verify(token);
      assert.equal(result.ok, false);
      if (!result.ok) reasons.add(result.reason);
    }
    assert.deepEqual([...reasons], ["provider_unavailable"]);
    assert.equal(server.hits, 1);
  });
});

Deno.test("scopes come from scope or scp, unknown ones are dropped, and profiles narrow them", async () => {
  await withKeys(async (server) => {
    const a = await key("a");
    server.keys = [a.jwk];
    const profiles = {
      claim: "roles",
      scopes: new Map([["reader", ["shell:read"]], ["builder", ["shell:read", "shell:execute"]]]),
    };
    const verifier = createExternalVerifier({
      settings: settings(server.url, { profiles }),
      resource: RESOURCE,
      introspectionSecret: null,
      now: Date.now,
    });
    const scopesOf = async (claims: Record<string, unknown>) => {
      const result = await verifier.verify(await a.sign(claims));
      return result.ok ? [...result.token.scopes].sort() : result.reason;
    };
    assert.deepEqual(await scopesOf({ roles: "reader" }), ["shell:read"]);
    assert.deepEqual(await scopesOf({ roles: ["reader", "builder"] }), [
      "shell:execute",
      "shell:read",
    ]);
    assert.deepEqual(
      await scopesOf({ roles: ["builder"], scope: undefined, scp: ["shell:execute", "openid"] }),
      ["shell:execute"],
    );
    assert.deepEqual(await scopesOf({ roles: ["builder"], scope: "profile email" }), []);
    assert.equal(await scopesOf({ roles: ["__proto__", "constructor"] }), "no_profile");
    assert.equal(await scopesOf({ roles: undefined }), "no_profile");
    assert.equal(await scopesOf({ roles: "reader", scope: 7 }), "bad_claims");
    assert.equal(await scopesOf({ roles: "reader", client_id: undefined }), "bad_claims");
  });
});

Deno.test("introspection answers are cached briefly, never past exp, and a provider error is not cached", async () => {
  const controller = new AbortController();
  let hits = 0;
  let failing = false;
  let exp = 0;
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen: () => {},
  }, async (request) => {
    hits++;
    const form = new URLSearchParams(await request.text());
    assert.equal(request.headers.get("authorization"), `Basic ${btoa("htmcp:s3cret")}`);
    if (failing) return new Response("down", { status: 500 });
    return Response.json({
      active: form.get("token") === "good-opaque-token",
      iss: "http://127.0.0.1:8/issuer",
      aud: RESOURCE,
      client_id: "agent",
      scope: "shell:read",
      exp,
    });
  });
  try {
    let clock = Date.now();
    exp = Math.floor(clock / 1000) + 40;
    const verifier = createExternalVerifier({
      settings: settings("http://127.0.0.1:1/unused", {
        introspection: {
          endpoint: `http://127.0.0.1:${server.addr.port}/introspect`,
          clientId: "htmcp",
          secretFile: "/unused",
          cacheSeconds: 60,
        },
      }),
      resource: RESOURCE,
      introspectionSecret: "s3cret",
      now: () => clock,
    });
    const first = await verifier.verify("good-opaque-token");
    assert.ok(first.ok && first.token.clientId === "agent");
    assert.deepEqual(first.ok && [...first.token.scopes], ["shell:read"]);
    await verifier.verify("good-opaque-token");
    assert.equal(hits, 1, "the second check was answered from the cache");
    // exp (40 s) comes before the cache lifetime (60 s): the entry ends at exp.
    clock += 41_000;
    failing = true;
    assert.deepEqual(await verifier.verify("good-opaque-token"), {
      ok: false,
      reason: "provider_unavailable",
      clientId: null,
    });
    assert.equal(hits, 2);
    failing = false;
    exp = Math.floor(clock / 1000) + 300;
    assert.equal((await verifier.verify("good-opaque-token")).ok, true);
    assert.equal(hits, 3, "the provider error was not cached");
    assert.deepEqual(await verifier.verify("never-issued"), {
      ok: false,
      reason: "token_inactive",
      clientId: null,
    });
  } finally {
    controller.abort();
    await server.finished;
  }
});
