/**
 * `StateStore`: the one interface to durable state, with two backends (the
 * local state directory, and PostgreSQL for a fleet of replicas).
 *
 * Records are JSON objects in namespaces (`kind`), addressed by id; both
 * names are `[A-Za-z0-9_-]{1,64}` on every backend, so a record can move
 * between backends and a crafted id can never be a path or a SQL fragment.
 *
 * The first five members are `RecordStore`'s, with the same meaning, so code
 * written against `RecordStore` moves onto any backend by changing its type.
 * The rest answer what one process cannot: two replicas racing on one record
 * (`compareAndSwap`, `update`), and a replica learning that another changed
 * a record (`watch`).
 *
 * Mutual exclusion: `withLock`, `update` and `compareAndSwap` on one kind
 * exclude each other on every backend and across every process sharing the
 * store (a kind's `flock`; a PostgreSQL advisory lock). None of them may be
 * called from inside `withLock` of the same kind: that waits for itself.
 * `read`, `write`, `remove` and `list` take no lock.
 *
 * @module
 */

/** A record with its version: an opaque string that changes whenever the record does. */
export interface VersionedRecord {
  /** The record as stored. */
  readonly value: unknown;
  /** Changes whenever the record does; compared by `compareAndSwap`. */
  readonly version: string;
}

/**
 * What `update` does with the record it read: `next` undefined leaves it
 * alone, null deletes it, an object replaces it; `result` is returned.
 */
export interface UpdateDecision<T> {
  /** The record to store: undefined leaves it, null deletes it. */
  readonly next?: Record<string, unknown> | null;
  /** What `update` returns to its caller. */
  readonly result: T;
}

/**
 * Told when records of a kind change: with the id, or with null when
 * changes may have been missed (a dropped database connection) and the
 * watcher should re-read what it cares about.
 */
export type ChangeListener = (id: string | null) => void;

/** A registered watch. */
export interface Watch {
  /** Stops the notifications (idempotent). */
  close(): Promise<void>;
}

/** Which backend a store is. */
export type StateBackend = "local" | "postgres";

/**
 * Durable, namespaced records shared by every process (and, on PostgreSQL,
 * every replica) of one policy: jobs, sessions, OAuth state, approvals.
 */
export interface StateStore {
  /** Which backend this is. */
  readonly backend: StateBackend;

  // RecordStore's members ---------------------------------------------------

  /** Runs `fn` holding the kind's exclusive lock across every process. */
  withLock<T>(kind: string, fn: () => Promise<T>): Promise<T>;
  /** The record, or null when there is none. */
  read(kind: string, id: string): Promise<unknown>;
  /** Creates or replaces the record atomically (a reader sees old or new, never a mix). */
  write(kind: string, id: string, record: unknown): Promise<void>;
  /** Deletes the record; a missing one is not an error. */
  remove(kind: string, id: string): Promise<void>;
  /** Every record id of `kind`, unsorted. */
  list(kind: string): Promise<string[]>;

  // For several replicas ----------------------------------------------------

  /** Every record of `kind` by id (one query on PostgreSQL; a read per file locally). */
  readAll(kind: string): Promise<Map<string, unknown>>;
  /** The record with its version, or null. */
  get(kind: string, id: string): Promise<VersionedRecord | null>;
  /**
   * Replaces the record only if it is still at `expected` (null: only if it
   * does not exist); `next` null deletes it. Of two writers that read the
   * same version, exactly one succeeds.
   *
   * @returns True when this call made the change.
   */
  compareAndSwap(
    kind: string,
    id: string,
    expected: string | null,
    next: Record<string, unknown> | null,
  ): Promise<boolean>;
  /**
   * Reads the record (null when absent), lets `decide` choose, and applies
   * the choice in one step no other writer can interleave with. `decide`
   * must not touch the store (it runs under the kind's lock).
   */
  update<T>(
    kind: string,
    id: string,
    decide: (current: unknown) => UpdateDecision<T>,
  ): Promise<T>;
  /** Calls `listener` for changes to records of `kind` made by any process. */
  watch(kind: string, listener: ChangeListener): Promise<Watch>;
  /** True when the store answers now (for readiness); never throws. */
  ping(): Promise<boolean>;
  /** Releases connections and timers (idempotent). */
  close(): Promise<void>;
}
