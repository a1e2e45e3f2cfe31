/**
 * Sessions: a working directory that persists across calls, bound to the
 * caller that started it. Records live in the state store (one record per
 * session: a file in the state directory, or a row in PostgreSQL), so every
 * server sharing that store sees the same sessions, and every change is made
 * under the store's cross-process lock.
 *
 * Threats and answers:
 * - Guessing or reusing another caller's session: ids are 128 random bits,
 *   and a session found under another owner is answered exactly like a
 *   missing one ("not found"), so its existence is not revealed either.
 * - Sessions piling up (disk, lookups): each caller may hold at most
 *   `max_per_caller`; an unused session expires after `idle_ttl_s` and is
 *   removed when next seen or when its owner starts another.
 * - A stored cwd that later leads out (a folder replaced by a symlink):
 *   the cwd is stored jail-relative and confined again on every call.
 *
 * @module
 */
import type { SessionSettings } from "../config/types.ts";
import {
  isRecordName,
  LocalStateStore,
  type StatePolicy,
  type StateStore,
  stateStoreFor,
} from "../state/mod.ts";

const KIND = "sessions";

/** One session as stored: whose it is, where it stands, and when it was last used. */
export interface SessionRecord {
  /** 128 random bits, base64url: unguessable, and always a plain record name. */
  readonly id: string;
  /** Who started it: `local` (stdio, or HTTP without OAuth) or `client:<id>`. */
  readonly owner: string;
  /** The working directory relative to the jail root ("." for the root). */
  readonly cwd: string;
  /** When it was started (ms since the epoch). */
  readonly createdMs: number;
  /** When a call last used it (ms since the epoch): `idle_ttl_s` counts from here. */
  readonly lastUsedMs: number;
}

/** The new session, or the sentence why the caller may not start one (its limit reached). */
export type StartResult =
  | { readonly ok: true; readonly session: SessionRecord }
  | { readonly ok: false; readonly reason: string };

function isSessionRecord(value: unknown): value is SessionRecord {
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  return typeof record["id"] === "string" && typeof record["owner"] === "string" &&
    typeof record["cwd"] === "string" && typeof record["createdMs"] === "number" &&
    typeof record["lastUsedMs"] === "number";
}

/** The owner key of a caller: its OAuth client id, or `local` for an unauthenticated one. */
export function sessionOwner(clientId: string | null): string {
  return clientId === null ? "local" : `client:${clientId}`;
}

function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  // base64url: only [A-Za-z0-9_-], so the id is always one plain file name.
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}

/**
 * The sessions of one state store.
 *
 * @example
 * ```ts
 * import { sessionOwner, Sessions } from "./sessions.ts";
 * const sessions = new Sessions(await Deno.makeTempDir(), { idleTtlMs: 60_000, maxPerCaller: 4 });
 * const started = await sessions.start(sessionOwner("client-a"));
 * if (started.ok) started.session.cwd; // ".": a new session starts at the jail root
 * ```
 */
export class Sessions {
  readonly #store: StateStore;
  readonly #settings: SessionSettings;
  readonly #now: () => number;

  /**
   * Opens nothing: every operation reads and writes the store afresh, under its lock.
   *
   * @param store The state store, or a state directory for the local one.
   * @param settings The policy's `[sessions]`.
   * @param now The clock (tests move it).
   */
  constructor(
    store: StateStore | string,
    settings: SessionSettings,
    now: () => number = Date.now,
  ) {
    this.#store = typeof store === "string" ? new LocalStateStore(store) : store;
    this.#settings = settings;
    this.#now = now;
  }

  #expired(record: SessionRecord): boolean {
    return this.#now() - record.lastUsedMs > this.#settings.idleTtlMs;
  }

  /** The live session `id` of `owner`, or null; expired ones are removed. Call under the lock. */
  async #find(owner: string, id: string): Promise<SessionRecord | null> {
    if (!isRecordName(id)) return null;
    const record = await this.#store.read(KIND, id);
    if (!isSessionRecord(record) || record.id !== id) return null;
    if (this.#expired(record)) {
      await this.#store.remove(KIND, id);
      return null;
    }
    // Another caller's session is "not found", indistinguishable from none.
    return record.owner === owner ? record : null;
  }

  /** Starts a session in the jail root for `owner`, within the per-caller bound. */
  start(owner: string): Promise<StartResult> {
    return this.#store.withLock(KIND, async () => {
      let live = 0;
      for (const id of await this.#store.list(KIND)) {
        const record = await this.#store.read(KIND, id);
        if (!isSessionRecord(record)) continue;
        if (this.#expired(record)) {
          await this.#store.remove(KIND, id);
        } else if (record.owner === owner) {
          live++;
        }
      }
      if (live >= this.#settings.maxPerCaller) {
        return {
          ok: false,
          reason: `This caller already has ${live} open session(s), the limit; ` +
            "end one with session_end or let it expire.",
        };
      }
      const now = this.#now();
      const session = { id: newSessionId(), owner, cwd: ".", createdMs: now, lastUsedMs: now };
      await this.#store.write(KIND, session.id, session);
      return { ok: true, session };
    });
  }

  /** The session, its idle clock restarted; null when missing, expired or another caller's. */
  use(owner: string, id: string): Promise<SessionRecord | null> {
    return this.#store.withLock(KIND, async () => {
      const record = await this.#find(owner, id);
      if (record === null) return null;
      const touched = { ...record, lastUsedMs: this.#now() };
      await this.#store.write(KIND, id, touched);
      return touched;
    });
  }

  /** Moves the session's cwd (jail-relative); false when the session is gone. */
  setCwd(owner: string, id: string, cwd: string): Promise<boolean> {
    return this.#store.withLock(KIND, async () => {
      const record = await this.#find(owner, id);
      if (record === null) return false;
      await this.#store.write(KIND, id, { ...record, cwd, lastUsedMs: this.#now() });
      return true;
    });
  }

  /** Ends the session; false when there was none for this caller. */
  end(owner: string, id: string): Promise<boolean> {
    return this.#store.withLock(KIND, async () => {
      const record = await this.#find(owner, id);
      if (record === null) return false;
      await this.#store.remove(KIND, id);
      return true;
    });
  }
}

const cache = new WeakMap<object, Sessions>();

/**
 * The sessions of `policy`'s state store (one instance per policy), or null
 * when it has none (the local backend without `state_dir`): sessions are
 * durable or absent.
 *
 * @param policy Where its state lives, and its `[sessions]` limits.
 * @returns The policy's one `Sessions`, or null without a state store.
 */
export function sessionsFor(
  policy: StatePolicy & { readonly sessions: SessionSettings },
): Sessions | null {
  const store = stateStoreFor(policy);
  if (store === null) return null;
  // Keyed by the store, not the policy: a store closed and opened again for
  // the same policy gets sessions over the new one.
  let sessions = cache.get(store);
  if (sessions === undefined) {
    sessions = new Sessions(store, policy.sessions);
    cache.set(store, sessions);
  }
  return sessions;
}

/** The sentence for a session id that is not usable by this caller (never says why). */
export function sessionNotFound(id: string): string {
  return `Session "${id.slice(0, 64)}" was not found: it ended, expired, or was never started ` +
    "by this caller. Call session_start for a new one.";
}
