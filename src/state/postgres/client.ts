/**
 * Opens the PostgreSQL connection pool (porsager's `postgres`, no native
 * code, no dependencies) from `[state]` and the URL.
 *
 * The client library falls back on `PG*` environment variables and the OS
 * user name for every option it is not given. Under the generated
 * permission set those reads would fail (and outside it they would let the
 * environment redirect the store), so every option is passed explicitly;
 * the password as a function, because an empty one would be looked up in
 * `PGPASSWORD`. One read cannot be avoided by options (`PGAPPNAME`, for the
 * connection's label), so the pool is built with `process.env` swapped for an
 * empty object: the library reads its environment only in that synchronous
 * constructor, and nothing else runs in between.
 *
 * @module
 */
import process from "node:process";
import postgres from "postgres";
import type { StateSettings } from "../../config/types.ts";
import { parseStateUrl, readStateUrl } from "./url.ts";

/** The pool's query function. */
export type Sql = postgres.Sql;

/** Connections per process: one is held by a `withLock`, others serve reads meanwhile. */
const POOL_SIZE = 8;

/** The pool, or the sentence why it could not be built (never quoting the URL). */
export type OpenResult =
  | { readonly ok: true; readonly sql: Sql }
  | { readonly ok: false; readonly message: string };

/**
 * Builds the pool (connects lazily, on the first query).
 *
 * @param settings The postgres `[state]` settings.
 * @param env The environment (`HTMCP_STATE_URL`).
 * @returns The pool, or a sentence that never quotes the URL (it holds a password).
 */
export async function openPool(
  settings: Extract<StateSettings, { backend: "postgres" }>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpenResult> {
  const text = await readStateUrl(settings, env);
  if (!text.ok) return text;
  const endpoint = parseStateUrl(text.value);
  if (!endpoint.ok) return endpoint;
  const { host, port, user, database, tls } = endpoint.value;
  if (host !== settings.host || port !== settings.port) {
    // The permission layer granted the address seen when the policy loaded.
    return {
      ok: false,
      message:
        `The PostgreSQL URL now names ${host}:${port}, but the server was set up for ${settings.host}:${settings.port}; restart it to use the new address.`,
    };
  }
  const password = decodeURIComponent(new URL(text.value).password);
  const options = {
    host,
    port,
    user,
    database,
    pass: () => password,
    ssl: tls === "verify-full" ? "verify-full" : false,
    sslnegotiation: null,
    max: POOL_SIZE,
    idle_timeout: 60,
    connect_timeout: 5,
    max_lifetime: 30 * 60,
    max_pipeline: 100,
    backoff: (attempt: number) => Math.min(0.1 * 2 ** attempt, 2),
    keep_alive: 60,
    prepare: true,
    debug: false,
    fetch_types: false,
    publications: "alltables",
    target_session_attrs: "read-write",
    onnotice: () => {},
    connection: { application_name: "htmcp" },
  };
  // A variable, not a literal: the library's types omit sslnegotiation, which
  // must still be given (else it is read from PGSSLNEGOTIATION).
  const sql = withoutEnvironment(() =>
    postgres(options as postgres.Options<Record<string, never>>)
  );
  return { ok: true, sql };
}

/** Runs the synchronous `fn` with an empty `process.env` (see the module note). */
function withoutEnvironment<T>(fn: () => T): T {
  const saved = process.env;
  process.env = Object.freeze(Object.create(null));
  try {
    return fn();
  } finally {
    process.env = saved;
  }
}
