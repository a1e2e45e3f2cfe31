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
 * Bounded: at most `maxSessions` at once and `maxPerClient` per client (the
 * client's least recently used session is closed to make room, since a client
 * that restarts loses its ids), and sessions idle longer than `idleMs` are
 * closed by a sweep.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallRegistry } from "../../server/mod.ts";
import type { TrackedHttpTransport } from "./tracked_transport.ts";

/** One live session. */
export interface Session {
  readonly id: string;
  /** The client id that created the session; null for unauthenticated loopback callers. */
  readonly owner: string | null;
  readonly transport: TrackedHttpTransport;
  readonly server: McpServer;
  /** Its tool calls in flight. */
  readonly calls: CallRegistry;
  /** `performance.now()` of the last request. */
  lastSeen: number;
}

/** Limits of the session table. */
export interface SessionLimits {
  readonly maxSessions: number;
  readonly maxPerClient: number;
  readonly idleMs: number;
}

/** Defaults: generous for people, small enough that a flood cannot grow memory without bound. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = Object.freeze({
  maxSessions: 256,
  maxPerClient: 16,
  idleMs: 30 * 60_000,
});

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
  #sweeper: ReturnType<typeof setInterval> | null = null;

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
    const every = Math.max(1_000, Math.min(60_000, Math.floor(this.#limits.idleMs / 2)));
    const sweeper = setInterval(() => void this.closeIdle(), every);
    // The sweep must not keep a stopping process alive.
    Deno.unrefTimer(sweeper);
    this.#sweeper = sweeper;
  }

  /**
   * Finds `id` for `owner`, refreshing its idle clock.
   */
  lookup(id: string, owner: string | null): LookupResult {
    const session = this.#sessions.get(id);
    if (session === undefined) return { ok: false, reason: "unknown" };
    if (session.owner !== owner) return { ok: false, reason: "other_client" };
    session.lastSeen = performance.now();
    return { ok: true, session };
  }

  /**
   * Whether a new session for `owner` may be created: closes the owner's least
   * recently used session when the owner is at its cap.
   *
   * @returns false when the whole table is full.
   */
  async makeRoom(owner: string | null): Promise<boolean> {
    const mine = [...this.#sessions.values()].filter((session) => session.owner === owner);
    if (mine.length >= this.#limits.maxPerClient) {
      mine.sort((a, b) => a.lastSeen - b.lastSeen);
      const evict = mine.slice(0, mine.length - this.#limits.maxPerClient + 1);
      await Promise.all(evict.map((session) => this.close(session.id)));
    }
    return this.#sessions.size < this.#limits.maxSessions;
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
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
    const sessions = [...this.#sessions.values()];
    await Promise.all(sessions.map((session) => this.cancelAndDrain(session, reason, graceMs)));
    await Promise.all(sessions.map((session) => this.close(session.id)));
  }
}
