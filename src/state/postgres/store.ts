/**
 * The PostgreSQL backend of `StateStore`, for replicas that share state.
 *
 * One table, `htmcp_records (kind, id, value, version)`, the value JSON text; the
 * version counts changes, so a compare-and-swap can never succeed on a
 * record changed and changed back. A trigger announces every change with
 * `pg_notify('htmcp_state', 'kind/id')`; `watch` LISTENs on that channel on
 * one connection of the pool, and reports null after a reconnection, when
 * notifications may have been missed.
 *
 * Mutual exclusion per kind is an advisory lock keyed ("htmc", hashtext(kind)):
 * held for a transaction by `update` and `compareAndSwap`, and by `withLock`
 * for a transaction kept open around its callback (if that connection dies
 * the database releases the lock, so a crashed replica never holds it).
 *
 * @module
 */
import type { Sql } from "./client.ts";
import { requireName, requireObject } from "../_names.ts";
import { after, type Timer } from "../../timers/mod.ts";
import { KeyedMutex } from "../_keyed_mutex.ts";
import type {
  ChangeListener,
  StateStore,
  UpdateDecision,
  VersionedRecord,
  Watch,
} from "../store.ts";

const LOCK_CLASS = 1752460643;
const CHANNEL = "htmcp_state";
const PING_TIMEOUT_MS = 2_000;

/** `StateStore` over a PostgreSQL pool whose schema is current. */
export class PostgresStateStore implements StateStore {
  /** Always `"postgres"`. */
  readonly backend = "postgres" as const;
  readonly #sql: Sql;
  readonly #listeners = new Map<string, Set<ChangeListener>>();
  /** One waiter per kind per process on the database lock (see `KeyedMutex`). */
  readonly #local = new KeyedMutex();
  #listening: Promise<{ unlisten(): Promise<void> }> | null = null;
  #closed = false;

  /**
   * A store over the shared database.
   *
   * @param sql An open pool (see `openPool`); this store ends it on `close`.
   */
  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async withLock<T>(kind: string, fn: () => Promise<T>): Promise<T> {
    requireName("kind", kind);
    return await this.#local.run(kind, () => this.#withDatabaseLock(kind, fn));
  }

  async #withDatabaseLock<T>(kind: string, fn: () => Promise<T>): Promise<T> {
    // A transaction holds the lock (released at its end, or by the database
    // when the connection dies); `fn` works through the other connections.
    // Not `reserve()`: in this client version it never resolves on a pool
    // that has no idle connection yet.
    return await this.#sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${kind}))`;
      return await fn();
    }) as T;
  }

  async read(kind: string, id: string): Promise<unknown> {
    return (await this.get(kind, id))?.value ?? null;
  }

  async write(kind: string, id: string, record: unknown): Promise<void> {
    requireName("kind", kind);
    requireName("id", id);
    await this.#sql`
      INSERT INTO htmcp_records (kind, id, value) VALUES (${kind}, ${id}, ${this.#json(record)})
      ON CONFLICT (kind, id) DO UPDATE
        SET value = excluded.value, version = htmcp_records.version + 1, updated_at = now()`;
  }

  async remove(kind: string, id: string): Promise<void> {
    requireName("kind", kind);
    requireName("id", id);
    await this.#sql`DELETE FROM htmcp_records WHERE kind = ${kind} AND id = ${id}`;
  }

  async list(kind: string): Promise<string[]> {
    requireName("kind", kind);
    const rows = await this.#sql`SELECT id FROM htmcp_records WHERE kind = ${kind}`;
    return rows.map((row) => String(row.id));
  }

  async readAll(kind: string): Promise<Map<string, unknown>> {
    requireName("kind", kind);
    const rows = await this.#sql`SELECT id, value FROM htmcp_records WHERE kind = ${kind}`;
    return new Map(rows.map((row) => [String(row.id), JSON.parse(String(row.value))]));
  }

  async get(kind: string, id: string): Promise<VersionedRecord | null> {
    requireName("kind", kind);
    requireName("id", id);
    const [row] = await this.#sql`
      SELECT value, version::text AS version FROM htmcp_records WHERE kind = ${kind} AND id = ${id}`;
    return row === undefined
      ? null
      : { value: JSON.parse(String(row.value)), version: String(row.version) };
  }

  async compareAndSwap(
    kind: string,
    id: string,
    expected: string | null,
    next: Record<string, unknown> | null,
  ): Promise<boolean> {
    requireName("kind", kind);
    requireName("id", id);
    if (next !== null) requireObject(next);
    return await this.#local.run(kind, () => this.#compareAndSwap(kind, id, expected, next));
  }

  async #compareAndSwap(
    kind: string,
    id: string,
    expected: string | null,
    next: Record<string, unknown> | null,
  ): Promise<boolean> {
    return await this.#sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${kind}))`;
      if (expected === null) {
        if (next === null) {
          const rows = await tx`SELECT 1 FROM htmcp_records WHERE kind = ${kind} AND id = ${id}`;
          return rows.length === 0;
        }
        const rows = await tx`
          INSERT INTO htmcp_records (kind, id, value) VALUES (${kind}, ${id}, ${this.#json(next)})
          ON CONFLICT (kind, id) DO NOTHING RETURNING 1`;
        return rows.length === 1;
      }
      if (!/^[0-9]{1,19}$/.test(expected)) return false;
      const rows = next === null
        ? await tx`
          DELETE FROM htmcp_records
          WHERE kind = ${kind} AND id = ${id} AND version = ${expected}::bigint RETURNING 1`
        : await tx`
          UPDATE htmcp_records
          SET value = ${this.#json(next)}, version = version + 1, updated_at = now()
          WHERE kind = ${kind} AND id = ${id} AND version = ${expected}::bigint RETURNING 1`;
      return rows.length === 1;
    }) as boolean;
  }

  async update<T>(
    kind: string,
    id: string,
    decide: (current: unknown) => UpdateDecision<T>,
  ): Promise<T> {
    requireName("kind", kind);
    requireName("id", id);
    return await this.#local.run(kind, () => this.#update(kind, id, decide));
  }

  async #update<T>(
    kind: string,
    id: string,
    decide: (current: unknown) => UpdateDecision<T>,
  ): Promise<T> {
    return await this.#sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${kind}))`;
      const [row] = await tx`
        SELECT value FROM htmcp_records WHERE kind = ${kind} AND id = ${id} FOR UPDATE`;
      const decision = decide(row === undefined ? null : JSON.parse(String(row.value)));
      if (decision.next === null) {
        await tx`DELETE FROM htmcp_records WHERE kind = ${kind} AND id = ${id}`;
      } else if (decision.next !== undefined) {
        const value = this.#json(requireObject(decision.next));
        await tx`
          INSERT INTO htmcp_records (kind, id, value) VALUES (${kind}, ${id}, ${value})
          ON CONFLICT (kind, id) DO UPDATE
            SET value = excluded.value, version = htmcp_records.version + 1, updated_at = now()`;
      }
      return decision.result;
    }) as T;
  }

  async watch(kind: string, listener: ChangeListener): Promise<Watch> {
    requireName("kind", kind);
    let set = this.#listeners.get(kind);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(kind, set);
    }
    set.add(listener);
    await this.#listen();
    return {
      close: () => {
        this.#listeners.get(kind)?.delete(listener);
        return Promise.resolve();
      },
    };
  }

  /** One LISTEN for the whole store, started by the first watch. */
  #listen(): Promise<unknown> {
    if (this.#listening !== null) return this.#listening;
    let first = true;
    this.#listening = this.#sql.listen(CHANNEL, (payload) => {
      const slash = payload.indexOf("/");
      if (slash < 0) return;
      const set = this.#listeners.get(payload.slice(0, slash));
      for (const listener of set ?? []) listener(payload.slice(slash + 1));
    }, () => {
      // Called on every (re)subscription: after the first, anything may have
      // happened while the connection was down.
      if (first) {
        first = false;
        return;
      }
      for (const set of this.#listeners.values()) for (const listener of set) listener(null);
    });
    return this.#listening;
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    let timer: Timer | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = after(PING_TIMEOUT_MS, () => resolve(false));
    });
    try {
      return await Promise.race([
        this.#sql`SELECT 1 AS one`.then((rows) => rows[0]?.one === 1, () => false),
        timeout,
      ]);
    } finally {
      timer?.cancel();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    if (this.#listening !== null) {
      await this.#listening.then((handle) => handle.unlisten()).catch(() => {});
    }
    await this.#sql.end({ timeout: 2 });
  }

  #json(value: unknown): string {
    const text = JSON.stringify(value);
    // undefined, a function or a symbol has no JSON text: a caller bug.
    if (typeof text !== "string") throw new TypeError("A state record must be JSON.");
    return text;
  }
}
