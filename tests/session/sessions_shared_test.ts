/**
 * Sessions kept in a shared state store, on both backends (the local state
 * directory and a real PostgreSQL), as two replicas see them: a session
 * started on one is used, moved and ended on the other, and the per-caller
 * bound holds when both replicas start sessions for one caller at once.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { sessionOwner, Sessions } from "../../src/session/mod.ts";
import {
  LocalStateStore,
  migrate,
  openPool,
  PostgresStateStore,
  type StateStore,
} from "../../src/state/mod.ts";
import { postgresOrSkip } from "../_helpers/postgres.ts";

const SETTINGS = { idleTtlMs: 60_000, maxPerCaller: 3 };

interface Pair {
  readonly a: StateStore;
  readonly b: StateStore;
  tearDown(): Promise<void>;
}

async function localPair(): Promise<Pair> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-sessions-shared-" });
  const a = new LocalStateStore(`${dir}/state`);
  const b = new LocalStateStore(`${dir}/state`);
  return {
    a,
    b,
    async tearDown() {
      await a.close();
      await b.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function postgresPair(): Promise<Pair | null> {
  const server = await postgresOrSkip("sessions on PostgreSQL");
  if (server === null) return null;
  try {
    const url = await server.createDatabase("sessions");
    const pool = async () => {
      const opened = await openPool(
        { backend: "postgres", urlFile: null, host: "127.0.0.1", port: server.port },
        { HTMCP_STATE_URL: url },
      );
      if (!opened.ok) throw new Error(opened.message);
      return opened.sql;
    };
    const admin = await pool();
    await migrate(admin);
    await admin.end();
    const a = new PostgresStateStore(await pool());
    const b = new PostgresStateStore(await pool());
    return {
      a,
      b,
      async tearDown() {
        await a.close();
        await b.close();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

for (const [name, makePair] of [["local", localPair], ["postgres", postgresPair]] as const) {
  Deno.test(`sessions shared by two replicas on the ${name} backend`, async (t) => {
    const pair = await makePair();
    if (pair === null) return;
    try {
      const onA = new Sessions(pair.a, SETTINGS);
      const onB = new Sessions(pair.b, SETTINGS);

      await t.step(
        "a session started on one replica is used, moved and ended on the other",
        async () => {
          const owner = sessionOwner("client-1");
          const started = await onA.start(owner);
          ok(started.ok);
          const id = started.session.id;
          equal((await onB.use(owner, id))?.cwd, ".");
          equal(await onB.setCwd(owner, id, "src"), true);
          equal((await onA.use(owner, id))?.cwd, "src");
          // Another caller cannot see it on either replica.
          equal(await onB.use(sessionOwner("client-2"), id), null);
          equal(await onB.end(owner, id), true);
          equal(await onA.use(owner, id), null);
          equal(await onA.end(owner, id), false);
        },
      );

      await t.step(
        "the per-caller bound holds when both replicas start sessions at once",
        async () => {
          const owner = sessionOwner("racer");
          const results = await Promise.all(
            Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? onA : onB).start(owner)),
          );
          const started = results.filter((result) => result.ok);
          equal(started.length, SETTINGS.maxPerCaller);
          const refused = results.filter((result) => !result.ok);
          ok(refused.every((result) => !result.ok && /the limit/.test(result.reason)));
          const ids = started.map((result) => result.ok ? result.session.id : "");
          deepEqual(new Set(ids).size, SETTINGS.maxPerCaller);
        },
      );
    } finally {
      await pair.tearDown();
    }
  });
}
