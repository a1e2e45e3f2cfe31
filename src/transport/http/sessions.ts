/**
 * The MCP sessions of the HTTP server: one SDK transport and one `McpServer`
 * per session, each bound to the OAuth client that created it.
 *
 * A session id is a random UUID the server hands out; it is never
 * authentication. Every request is authenticated on its own, and a session is
 * found only when the authenticated client is the one that created it: a
 * different client presenting a valid id is told "Session not found", exactly
 * as for an id that never existed, so the answer leaks nothing.
 *
 * Bounded: at most `maxSessions` at once, `maxPerClient` per authenticated
 * client and `maxPerSource` per remote address for unauthenticated callers
 * (`[auth] mode = "none"` or the loopback bypass, which have no client id to
 * count by). A new session beyond a cap is refused with a JSON-RPC error that
 * names the limit (429 for a per-owner cap, 503 for the whole table); a live
 * session is never closed to make room, since its client would then get
 * "Session not found" for a session it never ended. Sessions idle longer than
 * `idleMs` are closed by a sweep, which is how a restarted client's forgotten
 * sessions go away.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { every, type Timer } from "../../timers/mod.ts";
import type { CallRegistry } from "../../server/mod.ts";
import type { TrackedHttpTransport } from "./tracked_transport.ts";

/** One live session. */
export interface Session {
  readonly id: string;
  /** Who may use the session: {@linkcode sessionOwner} of the caller that created it. */
  readonly owner: string;
  readonly transport: TrackedHttpTransport;
  readonly server: McpServer;
  /** Its tool calls in flight. */
  readonly calls: CallRegistry;
  /** `performance.now()` of the last request. */
  lastSeen: number;
}

/** Limits of the session table. */
export interface SessionLimits {
  /** Sessions open at once across all clients; a new one beyond it is refused. */
  readonly maxSessions: number;
  /** Per authenticated OAuth client. */
  readonly maxPerClient: number;
  /** Per remote address, for callers without a client id (default: `maxSessions / 4`). */
  readonly maxPerSource?: number;
  /** A session without a request for this long is closed by the sweep. */
  readonly idleMs: number;
}

/**
 * Defaults: generous for people, small enough that a flood cannot grow memory
 * without bound. Every unauthenticated local client shares the address
 * 127.0.0.1, so its cap is larger: 64 local windows or agents at once.
 */
export const DEFAULT_SESSION_LIMITS: SessionLimits = Object.freeze({
  maxSessions: 256,
  maxPerClient: 16,
  maxPerSource: 64,
  idleMs: 30 * 60_000,
});

/**
 * The owner key of a session: the OAuth client id when the caller has one,
 * else the remote address. The prefixes keep the two spaces apart, so a
 * client id can never pose as an address.
 */
export function sessionOwner(clientId: string | null, remoteAddr: string): string {
  return clientId === null ? `source:${remoteAddr}` : `client:${clientId}`;
}

/** Which cap refused a new session. */
export type SessionLimitName =
  | "max_sessions"
  | "max_sessions_per_client"
  | "max_sessions_per_source";

export type RoomResult =
  | { readonly ok: true; readonly reservation: SessionReservation }
  | { readonly ok: false; readonly limit: SessionLimitName; readonly max: number };

/**
 * A place held for a session being initialized: the SDK answers
 * `initialize` asynchronously, so concurrent `initialize` requests must count
 * before any of them is added, or a burst could pass the cap together.
 */
export interface SessionReservation {
  /** Gives the place back (the session was added, or initialization failed). Idempotent. */
  release(): void;
}

/**
 * How long a closing session (DELETE, shutdown) waits for its cancelled
 * calls' answers before its streams end regardless. A killed command's
 * outcome normally takes milliseconds; the bound keeps a stuck one from
 * holding a deploy.
 */
export const CLOSE_GRACE_MS = 5_000;

export type LookupResult =
  | { readonly ok: true; readonly session: Session }
  | { readonly ok: false; readonly reason: "unknown" | "other_client" };

/** The session table. */
export class SessionTable {
  readonly #limits: SessionLimits;
  readonly #sessions = new Map<string, Session>();
  /** Places held by sessions still initializing, per owner. */
  readonly #pending = new Map<string, number>();
  #pendingTotal = 0;
  #sweeper: Timer | null = null;

  constructor(limits: SessionLimits) {
    this.#limits = limits;
  }

  /** Number of live sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Starts the idle sweep (call once the server listens). */
  startSweeping(): void {
    if (this.#sweeper !== null) return;
    const period = Math.max(1_000, Math.min(60_000, Math.floor(this.#limits.idleMs / 2)));
    // The sweep must not keep a stopping process alive.
    this.#sweeper = every(period, () => void this.closeIdle(), { keepAlive: false });
  }

  /**
   * Finds `id` for `owner`, refreshing its idle clock.
   */
  lookup(id: string, owner: string): LookupResult {
    const session = this.#sessions.get(id);
    if (session === undefined) return { ok: false, reason: "unknown" };
    if (session.owner !== owner) return { ok: false, reason: "other_client" };
    session.lastSeen = performance.now();
    return { ok: true, session };
  }

  /**
   * Holds a place for a new session of `owner`, or names the cap it would
   * pass. Release the reservation once the session is added (or failed).
   */
  reserve(owner: string): RoomResult {
    const perOwner = owner.startsWith("client:")
      ? { limit: "max_sessions_per_client" as const, max: this.#limits.maxPerClient }
      : {
        limit: "max_sessions_per_source" as const,
        max: this.#limits.maxPerSource ?? Math.max(1, Math.floor(this.#limits.maxSessions / 4)),
      };
    let mine = this.#pending.get(owner) ?? 0;
    for (const session of this.#sessions.values()) if (session.owner === owner) mine++;
    if (mine >= perOwner.max) return { ok: false, ...perOwner };
    if (this.#sessions.size + this.#pendingTotal >= this.#limits.maxSessions) {
      return { ok: false, limit: "max_sessions", max: this.#limits.maxSessions };
    }
    this.#pending.set(owner, (this.#pending.get(owner) ?? 0) + 1);
    this.#pendingTotal++;
    let released = false;
    return {
      ok: true,
      reservation: {
        release: () => {
          if (released) return;
          released = true;
          const left = (this.#pending.get(owner) ?? 1) - 1;
          if (left <= 0) this.#pending.delete(owner);
          else this.#pending.set(owner, left);
          this.#pendingTotal--;
        },
      },
    };
  }

  /** Adds a session the SDK just initialized. */
  add(session: Session): void {
    this.#sessions.set(session.id, session);
  }

  /** Forgets a session without closing it (its transport already closed). */
  forget(id: string): void {
    this.#sessions.delete(id);
  }

  /**
   * Cancels a session's calls and waits (at most `graceMs`) until each has
   * its answer written, so a client learns `CANCELLED` instead of seeing its
   * stream end empty.
   *
   * @returns True when every answer went out in time.
   */
  async cancelAndDrain(session: Session, reason: string, graceMs: number): Promise<boolean> {
    session.calls.cancelAll(reason);
    return await session.transport.pending.drained(graceMs);
  }

  /** Closes one session: its SSE streams end and its server stops. */
  async close(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    this.#sessions.delete(id);
    await session.transport.close().catch(() => {});
    await session.server.close().catch(() => {});
  }

  /** Closes sessions idle longer than the limit. */
  async closeIdle(now: number = performance.now()): Promise<number> {
    const idle = [...this.#sessions.values()].filter((s) => now - s.lastSeen > this.#limits.idleMs);
    await Promise.all(idle.map((session) => this.close(session.id)));
    return idle.length;
  }

  /**
   * Stops the sweep, cancels every session's calls, waits (at most
   * `graceMs`, all sessions together) for their answers, then closes every
   * session.
   */
  async closeAll(reason = "the server is shutting down", graceMs = CLOSE_GRACE_MS): Promise<void> {
    this.#sweeper?.cancel();
    this.#sweeper = null;
    const sessions = [...this.#sessions.values()];
    await Promise.all(sessions.map((session) => this.cancelAndDrain(session, reason, graceMs)));
    await Promise.all(sessions.map((session) => this.close(session.id)));
  }
}

const LIMIT_WORDS: Readonly<Record<SessionLimitName, string>> = {
  max_sessions: "the server's limit on open MCP sessions",
  max_sessions_per_client: "the limit on open MCP sessions per OAuth client",
  max_sessions_per_source: "the limit on open MCP sessions per address for unauthenticated clients",
};

/**
 * The answer for a refused new session: a JSON-RPC error naming the limit, so
 * a client (and its user) can tell "too many sessions" from "no such session".
 * A per-owner cap is that owner's doing (429); a full table is the server's
 * state (503). Either way the caller may retry once a session ends.
 */
export function sessionLimitResponse(refusal: { limit: SessionLimitName; max: number }): Response {
  const message =
    `Too many sessions: ${LIMIT_WORDS[refusal.limit]} (${refusal.limit} = ${refusal.max}) ` +
    `is reached; end an unused session (HTTP DELETE) or wait for idle ones to expire.`;
  return new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      error: { code: -32000, message, data: { limit: refusal.limit, max: refusal.max } },
      id: null,
    }),
    {
      status: refusal.limit === "max_sessions" ? 503 : 429,
      headers: {
        "content-type": "application/json",
        "cache-control": "no-store",
        "retry-after": "30",
      },
    },
  );
}
