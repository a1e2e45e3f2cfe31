import assert from "node:assert/strict";
import { join } from "node:path";
import {
  argumentsDigest,
  MAX_STATE_TTL_MS,
  RequestStateSealer,
  type StateBinding,
} from "../../src/protocol/request_state.ts";
import { LocalStateStore, migrate, openPool, PostgresStateStore } from "../../src/state/mod.ts";
import { postgresOrSkip } from "../_helpers/postgres.ts";

async function sealerAt(now: () => number): Promise<RequestStateSealer> {
  const key = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
  return new RequestStateSealer(key, now);
}

const BINDING: StateBinding = {
  caller: "client:alice",
  tool: "run_command",
  argumentsDigest: "sha256:aa",
  policyHash: "sha256:pp",
};

Deno.test("a sealed state opens once, for its own binding, with its payload", async () => {
  const sealer = await sealerAt(() => 1_000);
  const state = await sealer.seal(BINDING, { approval: "ok" }, 60_000);
  assert.deepEqual(await sealer.open(state, BINDING), { ok: true, payload: { approval: "ok" } });
});

Deno.test("a replayed state is refused as replayed", async () => {
  const sealer = await sealerAt(() => 1_000);
  const state = await sealer.seal(BINDING, 1, 60_000);
  assert.equal((await sealer.open(state, BINDING)).ok, true);
  assert.deepEqual(await sealer.open(state, BINDING), { ok: false, reason: "replayed" });
});

Deno.test("an expired state is refused as expired", async () => {
  let now = 1_000;
  const sealer = await sealerAt(() => now);
  const state = await sealer.seal(BINDING, 1, 5_000);
  now += 5_000;
  assert.deepEqual(await sealer.open(state, BINDING), { ok: false, reason: "expired" });
});

Deno.test("a state is refused for another caller, tool, arguments or policy", async () => {
  const sealer = await sealerAt(() => 1_000);
  const cases: [Partial<StateBinding>, string][] = [
    [{ caller: "client:mallory" }, "other_caller"],
    [{ tool: "session_end" }, "other_tool"],
    [{ argumentsDigest: "sha256:bb" }, "other_arguments"],
    [{ policyHash: "sha256:qq" }, "other_policy"],
  ];
  for (const [change, reason] of cases) {
    const state = await sealer.seal(BINDING, 1, 60_000);
    assert.deepEqual(await sealer.open(state, { ...BINDING, ...change }), { ok: false, reason });
    // A refusal does not consume the state: its owner can still use it.
    assert.equal((await sealer.open(state, BINDING)).ok, true);
  }
});

Deno.test("a state with a changed payload or MAC, or from another key, is refused as forged", async () => {
  const sealer = await sealerAt(() => 1_000);
  const other = await sealerAt(() => 1_000);
  const state = await sealer.seal(BINDING, { approved: false }, 60_000);
  const [version, payload, mac] = state.split(".") as [string, string, string];
  const forgedPayload = JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/")));
  forgedPayload.s = { approved: true };
  const rewritten = btoa(JSON.stringify(forgedPayload)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
  assert.deepEqual(await sealer.open(`${version}.${rewritten}.${mac}`, BINDING), {
    ok: false,
    reason: "forged",
  });
  const flipped = (mac[0] === "A" ? "B" : "A") + mac.slice(1);
  assert.deepEqual(await sealer.open(`${version}.${payload}.${flipped}`, BINDING), {
    ok: false,
    reason: "forged",
  });
  assert.deepEqual(await other.open(state, BINDING), { ok: false, reason: "forged" });
  for (const junk of ["", "v1", "v2.a.b", "v1.a.b.c", "v1.!!.aa", "v1..", "x".repeat(70_000)]) {
    assert.equal((await sealer.open(junk, BINDING)).ok, false, JSON.stringify(junk.slice(0, 20)));
  }
});

Deno.test("seal() refuses a lifetime that is not 1 ms to the maximum", async () => {
  const sealer = await sealerAt(() => 1_000);
  for (const ttl of [0, -1, 1.5, MAX_STATE_TTL_MS + 1, Number.NaN]) {
    await assert.rejects(() => sealer.seal(BINDING, 1, ttl), RangeError);
  }
});

Deno.test("argumentsDigest() binds the same arguments in any key order, and nothing else", async () => {
  const a = await argumentsDigest({ command: "ls", cwd: "src", nested: { b: 1, a: [1, 2] } });
  const b = await argumentsDigest({ nested: { a: [1, 2], b: 1 }, cwd: "src", command: "ls" });
  assert.equal(a, b);
  assert.notEqual(
    a,
    await argumentsDigest({ command: "ls", cwd: "src", nested: { b: 1, a: [2, 1] } }),
  );
  assert.notEqual(await argumentsDigest({ a: "1" }), await argumentsDigest({ a: 1 }));
  assert.match(a, /^sha256:[0-9a-f]{64}$/);
});

Deno.test("fromStateDir() keys from the state dir's owner-only secret: two sealers of one dir agree, another dir's does not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-mrtr-" });
  try {
    const first = await RequestStateSealer.fromStateDir(join(dir, "state"));
    const second = await RequestStateSealer.fromStateDir(join(dir, "state"));
    const elsewhere = await RequestStateSealer.fromStateDir(join(dir, "other"));
    assert.ok(first.ok && second.ok && elsewhere.ok);
    const state = await first.sealer.seal(BINDING, 1, 60_000);
    assert.deepEqual(await elsewhere.sealer.open(state, BINDING), { ok: false, reason: "forged" });
    assert.equal((await second.sealer.open(state, BINDING)).ok, true);
    const info = await Deno.stat(join(dir, "state", "oauth-jwt-secret"));
    assert.equal((info.mode ?? 0) & 0o077, 0);
    // A secret others can read is refused, not used.
    await Deno.chmod(join(dir, "state", "oauth-jwt-secret"), 0o644);
    const loose = await RequestStateSealer.fromStateDir(join(dir, "state"));
    assert.equal(loose.ok, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("replicas on one PostgreSQL store open what any of them sealed, exactly once across them", async () => {
  const database = await postgresOrSkip("request states across replicas");
  if (database === null) return;
  const stores: PostgresStateStore[] = [];
  try {
    const url = await database.createDatabase("request_states");
    for (let n = 0; n < 2; n++) {
      const pool = await openPool(
        { backend: "postgres", urlFile: null, host: "127.0.0.1", port: database.port },
        { HTMCP_STATE_URL: url },
      );
      assert.ok(pool.ok);
      if (stores.length === 0) await migrate(pool.sql);
      stores.push(new PostgresStateStore(pool.sql));
    }
    const [a, b] = await Promise.all(
      stores.map((store) => RequestStateSealer.forStore(store, null)),
    );
    assert.ok(a?.ok && b?.ok);
    const state = await a.sealer.seal(BINDING, { step: 2 }, 60_000);
    // Sealed on A, opened on B: one fleet key.
    assert.deepEqual(await b.sealer.open(state, BINDING), { ok: true, payload: { step: 2 } });
    // Replayed to A, which never opened it itself: single use is the store's.
    assert.deepEqual(await a.sealer.open(state, BINDING), { ok: false, reason: "replayed" });
  } finally {
    for (const store of stores) await store.close();
    await database.stop();
  }
});

Deno.test("two servers on one state dir refuse a state the other already accepted", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-request-state-" });
  try {
    const stateDir = join(dir, "state");
    const [a, b] = await Promise.all(
      [0, 1].map(() => RequestStateSealer.forStore(new LocalStateStore(stateDir), stateDir)),
    );
    assert.ok(a?.ok && b?.ok);
    const state = await a.sealer.seal(BINDING, "x", 60_000);
    assert.equal((await b.sealer.open(state, BINDING)).ok, true);
    assert.deepEqual(await a.sealer.open(state, BINDING), { ok: false, reason: "replayed" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
