/**
 * The whole `StateStore` contract, run against both backends: the local
 * state directory and a real PostgreSQL server started for this module.
 * "Two replicas" are two store instances over the same state (two file
 * handles; two connection pools), racing for real.
 */
import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import {
  LocalStateStore,
  migrate,
  openPool,
  PostgresStateStore,
  type StateStore,
} from "../../src/state/mod.ts";
import { postgresOrSkip, type PostgresServer } from "../_helpers/postgres.ts";

/** Opens a store over shared state; every call is another "replica". */
type Opener = () => Promise<StateStore>;

interface Backend {
  readonly name: string;
  setUp(): Promise<{ open: Opener; tearDown(): Promise<void> } | null>;
}

const local: Backend = {
  name: "local",
  async setUp() {
    const dir = await Deno.makeTempDir({ prefix: "htmcp-state-" });
    const opened: StateStore[] = [];
    return {
      open: () => {
        const store = new LocalStateStore(`${dir}/state`, { pollMs: 50 });
        opened.push(store);
        return Promise.resolve(store);
      },
      async tearDown() {
        for (const store of opened) await store.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  },
};

async function postgresPool(url: string) {
  const u = new URL(url);
  const pool = await openPool(
    { backend: "postgres", urlFile: null, host: u.hostname, port: Number(u.port) },
    { HTMCP_STATE_URL: url },
  );
  if (!pool.ok) throw new Error(pool.message);
  return pool.sql;
}

const postgres: Backend = {
  name: "postgres",
  async setUp() {
    const server: PostgresServer | null = await postgresOrSkip("the StateStore contract");
    if (server === null) return null;
    let url: string;
    try {
      url = await server.createDatabase("contract");
      const admin = await postgresPool(url);
      await migrate(admin);
      await admin.end();
    } catch (error) {
      // Never leave a server running behind a failed setup.
      await server.stop();
      throw error;
    }
    const opened: StateStore[] = [];
    return {
      open: async () => {
        const store = new PostgresStateStore(await postgresPool(url));
        opened.push(store);
        return store;
      },
      async tearDown() {
        for (const store of opened) await store.close();
        await server.stop();
      },
    };
  },
};

let kindCounter = 0;
/** A fresh kind per step, so steps never see each other's records. */
const freshKind = () => `k${++kindCounter}_${crypto.randomUUID().slice(0, 8)}`;

async function eventually(predicate: () => boolean, what: string): Promise<void> {
  // Bounded wait for an asynchronous notification (not a speed target).
  for (let i = 0; i < 200; i++) {
    if (predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const backend of [local, postgres]) {
  Deno.test(`StateStore contract on the ${backend.name} backend`, async (t) => {
    const setup = await backend.setUp();
    if (setup === null) return;
    const { open } = setup;
    try {
      const a = await open();
      const b = await open();
      equal(a.backend, backend.name);

      await t.step(
        "a record written by one replica is read, listed and removed by another",
        async () => {
          const kind = freshKind();
          equal(await b.read(kind, "one"), null);
          await a.write(kind, "one", {
            n: 1,
            text: "ü \u0000 \ud83d\ude00",
            list: [1.5, null, true],
          });
          deepEqual(await b.read(kind, "one"), {
            n: 1,
            text: "ü \u0000 \ud83d\ude00",
            list: [1.5, null, true],
          });
          await a.write(kind, "one", { n: 2 });
          deepEqual(await b.read(kind, "one"), { n: 2 });
          await a.write(kind, "two", { n: 3 });
          deepEqual((await b.list(kind)).sort(), ["one", "two"]);
          await b.remove(kind, "one");
          equal(await a.read(kind, "one"), null);
          deepEqual(await a.list(kind), ["two"]);
          deepEqual(await b.readAll(kind), new Map([["two", { n: 3 }]]));
          deepEqual(await b.readAll(freshKind()), new Map());
          // Removing what is not there is not an error.
          await b.remove(kind, "one");
        },
      );

      await t.step(
        "a kind or id that is not [A-Za-z0-9_-]{1,64} is refused before any I/O",
        async () => {
          const kind = freshKind();
          for (const bad of ["../x", "a/b", "", ".lock", "x".repeat(65), "a'; DROP TABLE x; --"]) {
            await rejects(a.write(kind, bad, {}), RangeError);
            await rejects(a.read(bad, "id"), RangeError);
            await rejects(a.get(kind, bad), RangeError);
            await rejects(a.compareAndSwap(kind, bad, null, {}), RangeError);
            await rejects(a.update(kind, bad, () => ({ result: 0 })), RangeError);
          }
          deepEqual(await a.list(kind), []);
        },
      );

      await t.step("the version changes whenever the record does", async () => {
        const kind = freshKind();
        equal(await a.get(kind, "r"), null);
        await a.write(kind, "r", { state: "running" });
        const first = await b.get(kind, "r");
        ok(first !== null);
        deepEqual(first.value, { state: "running" });
        await a.write(kind, "r", { state: "ended" });
        const second = await b.get(kind, "r");
        ok(second !== null && second.version !== first.version);
      });

      await t.step("compareAndSwap applies only at the expected version, and says so", async () => {
        const kind = freshKind();
        equal(await a.compareAndSwap(kind, "r", null, { v: 1 }), true);
        // Create-if-absent a second time loses: the record exists.
        equal(await b.compareAndSwap(kind, "r", null, { v: 99 }), false);
        const current = await a.get(kind, "r");
        ok(current !== null);
        deepEqual(current.value, { v: 1 });
        equal(await b.compareAndSwap(kind, "r", current.version, { v: 2 }), true);
        // The version a has is stale now: refused, and nothing changed.
        equal(await a.compareAndSwap(kind, "r", current.version, { v: 3 }), false);
        equal(await a.compareAndSwap(kind, "r", "not-a-version", { v: 4 }), false);
        deepEqual(await a.read(kind, "r"), { v: 2 });
        const latest = await a.get(kind, "r");
        ok(latest !== null);
        // A swap to null deletes.
        equal(await a.compareAndSwap(kind, "r", latest.version, null), true);
        equal(await b.read(kind, "r"), null);
        await rejects(a.compareAndSwap(kind, "r", null, [] as never), TypeError);
      });

      await t.step(
        "two replicas racing compareAndSwap from one version: exactly one wins, every round",
        async () => {
          const kind = freshKind();
          await a.write(kind, "approval", { used: false, by: null });
          for (let round = 0; round < 20; round++) {
            const [seenA, seenB] = await Promise.all([
              a.get(kind, "approval"),
              b.get(kind, "approval"),
            ]);
            ok(seenA !== null && seenB !== null);
            equal(seenA.version, seenB.version);
            const results = await Promise.all([
              a.compareAndSwap(kind, "approval", seenA.version, { used: true, by: "a", round }),
              b.compareAndSwap(kind, "approval", seenB.version, { used: true, by: "b", round }),
            ]);
            equal(results.filter((won) => won).length, 1, `round ${round}: ${results}`);
            const winner = results[0] ? "a" : "b";
            deepEqual(await a.read(kind, "approval"), { used: true, by: winner, round });
          }
        },
      );

      await t.step("two replicas racing create-if-absent: exactly one creates", async () => {
        const kind = freshKind();
        for (let round = 0; round < 20; round++) {
          const id = `job${round}`;
          const results = await Promise.all([
            a.compareAndSwap(kind, id, null, { end: "finished" }),
            b.compareAndSwap(kind, id, null, { end: "cancelled" }),
          ]);
          equal(results.filter((won) => won).length, 1, `round ${round}`);
        }
      });

      await t.step(
        "update is one indivisible read-decide-write: concurrent increments lose nothing",
        async () => {
          const kind = freshKind();
          const increment = (store: StateStore) =>
            store.update(kind, "counter", (current) => {
              const n = (current as { n?: number } | null)?.n ?? 0;
              return { next: { n: n + 1 }, result: n + 1 };
            });
          const results = await Promise.all(
            Array.from({ length: 30 }, (_, i) => increment(i % 2 === 0 ? a : b)),
          );
          deepEqual(await a.read(kind, "counter"), { n: 30 });
          // Every caller saw a distinct value: no two read the same count.
          equal(new Set(results).size, 30);
        },
      );

      await t.step(
        "update leaves the record alone or deletes it as decided, and returns the result",
        async () => {
          const kind = freshKind();
          await a.write(kind, "job", { state: "running" });
          // A job's end and its cancel: whichever comes second sees the first's state.
          const end = (store: StateStore, state: string) =>
            store.update(kind, "job", (current) => {
              const record = current as { state: string };
              if (record.state !== "running") return { result: `already ${record.state}` };
              return { next: { state }, result: state };
            });
          const outcomes = await Promise.all([end(a, "finished"), end(b, "cancelled")]);
          equal(outcomes.filter((o) => o.startsWith("already ")).length, 1, outcomes.join());
          const final = (await a.read(kind, "job")) as { state: string };
          ok(outcomes.includes(final.state));
          equal(await a.update(kind, "job", () => ({ next: null, result: "gone" })), "gone");
          equal(await b.read(kind, "job"), null);
          equal(await a.update(kind, "job", (current) => ({ result: current })), null);
        },
      );

      await t.step("withLock excludes the other replica across read-check-write", async () => {
        const kind = freshKind();
        await a.write(kind, "count", { n: 0 });
        const bump = (store: StateStore) =>
          store.withLock(kind, async () => {
            const { n } = (await store.read(kind, "count")) as { n: number };
            await new Promise((resolve) => setTimeout(resolve, 5));
            await store.write(kind, "count", { n: n + 1 });
          });
        await Promise.all(Array.from({ length: 12 }, (_, i) => bump(i % 2 === 0 ? a : b)));
        deepEqual(await a.read(kind, "count"), { n: 12 });
      });

      await t.step("withLock works as the very first operation of a new replica", async () => {
        // A regression: the first lock on a pool without a connection yet never began.
        const fresh = await open();
        const kind = freshKind();
        equal(await fresh.withLock(kind, async () => (await fresh.list(kind)).length), 0);
      });

      await t.step(
        "more concurrent withLock calls than the pool has connections all complete",
        async () => {
          const kind = freshKind();
          await a.write(kind, "count", { n: 0 });
          await Promise.all(Array.from({ length: 40 }, () =>
            a.withLock(kind, async () => {
              const { n } = (await a.read(kind, "count")) as { n: number };
              await a.write(kind, "count", { n: n + 1 });
            })));
          deepEqual(await b.read(kind, "count"), { n: 40 });
        },
      );

      await t.step("a watch hears of a change another replica made, with its id", async () => {
        const kind = freshKind();
        const heard: (string | null)[] = [];
        const watch = await a.watch(kind, (id) => heard.push(id));
        const other: string[] = [];
        const otherWatch = await a.watch(freshKind(), (id) => other.push(String(id)));
        try {
          await b.write(kind, "cancel-me", { cancel: true });
          await eventually(() => heard.includes("cancel-me"), "the write notification");
          const count = heard.length;
          await b.remove(kind, "cancel-me");
          await eventually(
            () => heard.slice(count).includes("cancel-me"),
            "the removal notification",
          );
          deepEqual(other, [], "a watch on another kind hears nothing");
        } finally {
          await watch.close();
          await otherWatch.close();
        }
        const after = heard.length;
        await b.write(kind, "late", { n: 1 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        equal(heard.length, after, "a closed watch hears nothing");
      });

      await t.step("ping answers true while the store is reachable", async () => {
        equal(await a.ping(), true);
        equal(await b.ping(), true);
      });
    } finally {
      await setup.tearDown();
    }
  });
}
