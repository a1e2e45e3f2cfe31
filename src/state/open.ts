/**
 * The state store of a policy: one per policy object, opened once.
 *
 * `openStateStore` is called at startup (the server, a CLI verb): for
 * PostgreSQL it connects, and refuses when the database is unreachable or
 * its schema is not the one this build needs (the sentence says to run
 * `htmcp state migrate`); it never migrates. After that, `stateStoreFor`
 * hands out the same store synchronously. The local backend needs no
 * opening: `stateStoreFor` builds it on first use from `state_dir`.
 *
 * @module
 */
import type { StateSettings } from "../config/types.ts";
import { STATE_URL_ENV } from "./postgres/url.ts";
import { LocalStateStore } from "./local_store.ts";
import type { OpenResult } from "./postgres/client.ts";
import { appliedVersion, schemaMismatch } from "./postgres/migrations.ts";
import { PostgresStateStore } from "./postgres/store.ts";
import type { StateStore } from "./store.ts";

/**
 * `openPool` of the PostgreSQL client, loaded on first use: the driver is
 * a large part of a cold start, and a policy on the local backend (the
 * default) never needs it.
 */
export async function openPool(
  settings: Extract<StateSettings, { backend: "postgres" }>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpenResult> {
  return (await import("./postgres/client.ts")).openPool(settings, env);
}

/** What of a policy decides its state store. */
export interface StatePolicy {
  /** `state_dir` (absolute), or null. */
  readonly stateDir: string | null;
  /** `[state]`; absent means the local backend. */
  readonly state?: StateSettings | undefined;
}

const stores = new WeakMap<object, StateStore>();

/** The opened store (null: no durable state), or the sentence why the server must not start. */
export type OpenStateResult =
  | { readonly ok: true; readonly store: StateStore | null }
  | { readonly ok: false; readonly message: string };

/**
 * Opens (and remembers) the store of `policy`.
 *
 * @returns The store (null: local backend without `state_dir`, no durable
 *   state), or the sentence why the server must not start.
 */
export async function openStateStore(
  policy: StatePolicy,
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpenStateResult> {
  const known = stores.get(policy);
  if (known !== undefined) return { ok: true, store: known };
  const settings = policy.state;
  if (settings === undefined || settings.backend === "local") {
    return { ok: true, store: stateStoreFor(policy) };
  }
  const pool = await openPool(settings, env);
  if (!pool.ok) return pool;
  let applied: number;
  try {
    applied = await appliedVersion(pool.sql);
  } catch (error) {
    await pool.sql.end({ timeout: 1 }).catch(() => {});
    return {
      ok: false,
      message:
        `The PostgreSQL state store at ${settings.host}:${settings.port} cannot be reached or read: ${
          describeError(error)
        }.`,
    };
  }
  const mismatch = schemaMismatch(applied);
  if (mismatch !== null) {
    await pool.sql.end({ timeout: 1 }).catch(() => {});
    return { ok: false, message: mismatch };
  }
  const store = new PostgresStateStore(pool.sql);
  stores.set(policy, store);
  return { ok: true, store };
}

/**
 * The store of `policy`, or null when it has none (local backend, no
 * `state_dir`).
 *
 * @throws Error for a PostgreSQL policy that was never opened: a wiring bug.
 */
export function stateStoreFor(policy: StatePolicy): StateStore | null {
  const known = stores.get(policy);
  if (known !== undefined) return known;
  if (policy.state !== undefined && policy.state.backend === "postgres") {
    throw new Error("The PostgreSQL state store is used before openStateStore opened it.");
  }
  if (policy.stateDir === null) return null;
  const store = new LocalStateStore(policy.stateDir);
  stores.set(policy, store);
  return store;
}

/** Closes and forgets the store of `policy`, if one was opened. */
export async function closeStateStore(policy: StatePolicy): Promise<void> {
  const store = stores.get(policy);
  if (store === undefined) return;
  stores.delete(policy);
  await store.close();
}

/** A database error as a short sentence part: its message, never the URL. */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // A driver may echo connection parameters; a password never follows "://".
  return text.replace(/[a-z]+:\/\/[^\s]*/gi, "(url)").slice(0, 300);
}

/**
 * The one variable the state store reads, read by name: the server's
 * permission set grants env names one by one, so the whole environment is
 * never asked for. Unset (or not granted) reads as absent.
 */
export function stateEnv(): Readonly<Record<string, string | undefined>> {
  let url: string | undefined;
  try {
    url = Deno.env.get(STATE_URL_ENV);
  } catch {
    url = undefined;
  }
  return url === undefined ? {} : { [STATE_URL_ENV]: url };
}
