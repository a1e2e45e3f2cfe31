/**
 * The OAuth registry over a shared state store, as a fleet uses it, on both
 * backends (the local store and a real PostgreSQL): two registries stand for
 * two replicas. An approval on one is seen by the other, a revocation made
 * anywhere is in force on every replica within one second (normally at
 * once, through the store's change notification), a second approval or
 * revocation never overrides the first, and replicas starting together agree
 * on one signing secret.
 */
import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import {
  type ClientRecord,
  ClientRegistry,
  openAuthState,
  REVOCATION_MAX_AGE_MS,
} from "../../src/auth/state/mod.ts";
import { storeSource } from "../../src/auth/state/sources.ts";
import {
  LocalStateStore,
  migrate,
  openPool,
  PostgresStateStore,
  type StateStore,
} from "../../src/state/mod.ts";
import { postgresOrSkip } from "../_helpers/postgres.ts";

function client(id: string, approvedAt: number): ClientRecord {
  return {
    client_id: id,
    client_name: "test",
    redirect_uris: ["http://127.0.0.1:9/cb"],
    scope: "commands:run",
    client_id_issued_at: approvedAt,
    approved_at: approvedAt,
  };
}

interface Fleet {
  open(): Promise<StateStore>;
  tearDown(): Promise<void>;
}

async function localFleet(): Promise<Fleet> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-oauth-store-" });
  const stores: StateStore[] = [];
  return {
    open: () => {
      const store = new LocalStateStore(`${dir}/state`, { pollMs: 50 });
      stores.push(store);
      return Promise.resolve(store);
    },
    async tearDown() {
      for (const store of stores) await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function postgresFleet(): Promise<Fleet | null> {
  const server = await postgresOrSkip("the OAuth registry on PostgreSQL");
  if (server === null) return null;
  let url = "";
  const pool = async () => {
    const opened = await openPool(
      { backend: "postgres", urlFile: null, host: "127.0.0.1", port: server.port },
      { HTMCP_STATE_URL: url },
    );
    if (!opened.ok) throw new Error(opened.message);
    return opened.sql;
  };
  try {
    url = await server.createDatabase("oauth");
    const admin = await pool();
    await migrate(admin);
    await admin.end();
  } catch (error) {
    // Never leave a server running behind a failed setup.
    await server.stop();
    throw error;
  }
  const stores: StateStore[] = [];
  return {
    async open() {
      const store = new PostgresStateStore(await pool());
      stores.push(store);
      return store;
    },
    async tearDown() {
      for (const store of stores) await store.close();
      await server.stop();
    },
  };
}

for (const [name, makeFleet] of [["local", localFleet], ["postgres", postgresFleet]] as const) {
  Deno.test(`OAuth state shared by two replicas through the ${name} state store`, async (t) => {
    const fleet = await makeFleet();
    if (fleet === null) return;
    try {
      const storeA = await fleet.open();
      const storeB = await fleet.open();

      await t.step(
        "replicas starting together agree on one signing secret, created once",
        async () => {
          const [a, b] = await Promise.all([openAuthState(storeA), openAuthState(storeB)]);
          ok(a.ok && b.ok);
          deepEqual(a.state.key, b.state.key);
          equal(a.state.key.byteLength >= 32, true);
          equal([a.state.secretCreated, b.state.secretCreated].filter((c) => c).length, 1);
          const again = await openAuthState(await fleet.open());
          ok(again.ok);
          deepEqual(again.state.key, a.state.key);
          equal(again.state.secretCreated, false);
        },
      );

      await t.step(
        "an approval on one replica is seen by the other; the first approval wins",
        async () => {
          const a = new ClientRegistry(storeA);
          const b = new ClientRegistry(storeB);
          const id = "https://client.example/meta.json";
          equal(await b.findApproved(id), null);
          await a.recordApproval(client(id, 100));
          await b.recordApproval({ ...client(id, 200), client_name: "impostor" });
          const deadline = Date.now() + 5_000;
          let seen = await b.findApproved(id);
          while (seen === null && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            seen = await b.findApproved(id);
          }
          ok(seen !== null);
          equal(seen.approved_at, 100);
          equal(seen.client_name, "test");
        },
      );

      await t.step(
        "a client revoked through one replica is refused by the other within one second",
        async () => {
          const appliedOnB: string[] = [];
          const a = new ClientRegistry(storeA);
          const b = new ClientRegistry(storeB, (id) => {
            appliedOnB.push(id);
            return Promise.resolve();
          });
          await a.recordApproval(client("victim", 300));
          // B has a fresh cached view that does not have the revocation yet.
          await new Promise((resolve) => setTimeout(resolve, 100));
          equal(await b.isClientRevoked("victim"), false);
          ok((await b.findApproved("victim")) !== null);
          const revoked = await a.revokeClient("victim", 400);
          equal(revoked.ok, true);
          const start = Date.now();
          while (!(await b.isClientRevoked("victim"))) {
            ok(
              Date.now() - start <= REVOCATION_MAX_AGE_MS + 500,
              "revocation not in force in time",
            );
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          equal(await b.findApproved("victim"), null);
          deepEqual(appliedOnB, ["victim"]);
          // Revoking again keeps the first revocation time.
          const view = await a.revocations();
          equal(view.clients.get("victim"), 400);
        },
      );

      await t.step("a revoked token id is refused by the other replica", async () => {
        const a = new ClientRegistry(storeA);
        const b = new ClientRegistry(storeB);
        const jti = crypto.randomUUID();
        equal((await b.revocations()).tokens.has(jti), false);
        await a.revokeTokens([{ jti, exp: 9_999_999_999 }], 500);
        const start = Date.now();
        while (!(await b.revocations()).tokens.has(jti)) {
          ok(Date.now() - start <= REVOCATION_MAX_AGE_MS + 500, "token revocation not in force");
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        notEqual((await b.revocations()).tokens.get(jti), undefined);
      });
    } finally {
      await fleet.tearDown();
    }
  });
}

Deno.test("without any change notification, a replica re-reads the revocation list once it is one second old", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-oauth-age-" });
  // A poll interval far beyond the test: this replica hears of no change.
  const deaf = new LocalStateStore(`${dir}/state`, { pollMs: 3_600_000 });
  const other = new LocalStateStore(`${dir}/state`, { pollMs: 3_600_000 });
  try {
    let clock = 1_000_000;
    const source = storeSource(deaf, () => clock);
    const writer = new ClientRegistry(other);
    equal((await source.revocations()).clients.has("late"), false);
    await writer.recordApproval(client("late", 1));
    equal((await writer.revokeClient("late", 2)).ok, true);
    clock += REVOCATION_MAX_AGE_MS - 1;
    equal((await source.revocations()).clients.has("late"), false, "still within the age bound");
    clock += 1;
    equal((await source.revocations()).clients.has("late"), true, "re-read at the bound");
  } finally {
    await deaf.close();
    await other.close();
    await Deno.remove(dir, { recursive: true });
  }
});
