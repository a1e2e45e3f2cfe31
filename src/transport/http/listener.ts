/**
 * The HTTP listener: our own accept loop, one HTTP/1.1 connection per
 * accepted socket, and limits that hold under a flood.
 *
 * Why not `Deno.serve`: its accept loop ends the whole server when `accept`
 * fails with EMFILE (verified on Deno 2.9.6: `finished` rejects with "Too many
 * open files" and nothing accepts again), and it cannot refuse a connection,
 * time out slow headers or close an idle socket. node:http under Deno was
 * tried too: after a flood at the descriptor limit it stops accepting for
 * good. Here `Deno.listen` accepts; a failed accept is survived by backing off
 * (10 ms doubling to 1 s), logged once per interval and counted; each socket
 * is served by the runtime's HTTP/1.1 implementation for a single connection
 * (`Deno.serveHttp`, kept by Deno 2 though no longer in its type
 * declarations, see `_legacy_http.ts`).
 *
 * Limits, each closing the socket (never the process):
 *
 * - `maxConnections`: beyond it a new socket is closed at once, unanswered;
 * - `headerTimeoutMs`: a new socket must deliver a whole request head in time
 *   (slowloris);
 * - `idleTimeoutMs`: a socket with no request in flight is closed;
 * - `maxUnreadBytes`: a socket whose client leaves this many response bytes
 *   unread is closed (its calls' outcomes are audited as they end).
 *
 * @module
 */
import { type LegacyHttpConn, type LegacyRequestEvent, legacyServeHttp } from "./_legacy_http.ts";
import { after, sleep, type Timer } from "../../timers/mod.ts";
import { boundUnread } from "./unread_bound.ts";

/** Limits of one listener. */
export interface ConnectionLimits {
  /** Connections open at once; a socket accepted beyond it is closed unanswered. */
  readonly maxConnections: number;
  /** A new connection must deliver a whole request head within this many ms (slowloris). */
  readonly headerTimeoutMs: number;
  /** A connection with no request in flight for this many ms is closed. */
  readonly idleTimeoutMs: number;
  /** Response bytes a connection may leave unread before it is closed; 0 = no bound. */
  readonly maxUnreadBytes: number;
}

/** Counters, for tests, `htmcp check` and the periodic log line. */
export interface ListenerStats {
  /** Connections open now. */
  open: number;
  /** Connections accepted since the listener started, refused ones included. */
  accepted: number;
  /** Closed at once because `maxConnections` were open. */
  refused: number;
  /** Failed `accept` calls (EMFILE and the like), each followed by a back-off. */
  acceptErrors: number;
  /** Connections closed for not sending a request head within `headerTimeoutMs`. */
  headerTimeouts: number;
  /** Connections closed after `idleTimeoutMs` without a request in flight. */
  idleTimeouts: number;
  /** Connections closed because their client left `maxUnreadBytes` of responses unread. */
  unreadClosed: number;
}

/** What a request handler learns about its connection. */
export interface ConnectionRequestInfo {
  readonly remoteAddr: Deno.NetAddr;
}

/** Options of {@linkcode listenHttp}. */
export interface ListenOptions {
  readonly hostname: string;
  readonly port: number;
  readonly tls: { readonly cert: string; readonly key: string } | null;
  readonly limits: ConnectionLimits;
  readonly handler: (request: Request, info: ConnectionRequestInfo) => Promise<Response>;
  /** A handler that threw: the answer to send (the detail goes to the audit log). */
  readonly onError: (error: unknown) => Response;
  /** Accept failures, at most once per `reportIntervalMs` (with the count since the last line). */
  readonly onAcceptError: (message: string, countSinceLast: number, total: number) => void;
  readonly reportIntervalMs?: number;
}

/** A running listener. */
export interface HttpListener {
  readonly addr: Deno.NetAddr;
  readonly stats: Readonly<ListenerStats>;
  /** Closes the listening socket; open connections go on. */
  stopAccepting(): void;
  /**
   * Settles once every answer being written has ended and had a moment to
   * leave (true), or after `timeoutMs` (false). Shutdown waits on it between
   * answering the calls in flight and closing the connections: the runtime
   * reports an answer written when its last bytes are handed to the
   * connection, not when they are on the socket, and closing the connection
   * at once drops them (the client then waits its whole request timeout for
   * an answer the server did send).
   */
  answersSent(timeoutMs: number): Promise<boolean>;
  /** Closes every open connection. */
  closeConnections(): void;
  /** Settles once accepting stopped and every connection closed. */
  readonly finished: Promise<void>;
}

export type ListenResult =
  | { readonly ok: true; readonly listener: HttpListener }
  | { readonly ok: false; readonly message: string };

const BACKOFF_MIN_MS = 10;
/** How long after an answer ended shutdown lets its last bytes leave. */
const FLUSH_GRACE_MS = 50;
const BACKOFF_MAX_MS = 1_000;

/**
 * Binds and starts accepting.
 *
 * @returns The listener, or one sentence when binding failed or the runtime
 *   lacks a per-connection HTTP server.
 */
export function listenHttp(options: ListenOptions): ListenResult {
  const serveHttp = legacyServeHttp();
  if (serveHttp === null) {
    return {
      ok: false,
      message:
        "This Deno has no per-connection HTTP server (Deno.serveHttp), which htmcp needs to bound its connections.",
    };
  }
  let socket: Deno.Listener<Deno.Conn, Deno.NetAddr>;
  try {
    socket = options.tls === null
      ? Deno.listen({ hostname: options.hostname, port: options.port, transport: "tcp" })
      : Deno.listenTls({
        hostname: options.hostname,
        port: options.port,
        cert: options.tls.cert,
        key: options.tls.key,
      });
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  const { limits } = options;
  const stats: ListenerStats = {
    open: 0,
    accepted: 0,
    refused: 0,
    acceptErrors: 0,
    headerTimeouts: 0,
    idleTimeouts: 0,
    unreadClosed: 0,
  };
  /** Each open socket, with its HTTP side once that started (which then owns the socket). */
  const open = new Map<Deno.Conn, LegacyHttpConn | null>();
  /** The streaming answers in flight on each socket, to abandon when its client is gone. */
  const streaming = new Map<Deno.Conn, Set<(reason: string) => void>>();
  let accepting = true;
  const allClosed = Promise.withResolvers<void>();
  const reportEvery = options.reportIntervalMs ?? 60_000;
  let lastReport = Number.NEGATIVE_INFINITY;
  let sinceReport = 0;

  const closeConn = (conn: Deno.Conn) => {
    if (!open.has(conn)) return;
    const http = open.get(conn) ?? null;
    open.delete(conn);
    stats.open = open.size;
    for (const abandon of streaming.get(conn) ?? []) abandon("The connection closed.");
    streaming.delete(conn);
    for (const resource of [http, conn]) {
      try {
        resource?.close();
      } catch {
        // already closed by the peer, or owned by the HTTP side
      }
    }
    if (!accepting && open.size === 0) allClosed.resolve();
  };

  const serveConnection = async (conn: Deno.Conn) => {
    let timer: Timer | null = null;
    const arm = (ms: number, kind: "headerTimeouts" | "idleTimeouts") => {
      timer = after(ms, () => {
        stats[kind]++;
        closeConn(conn);
      });
    };
    const disarm = () => {
      timer?.cancel();
      timer = null;
    };
    let active = 0;
    arm(limits.headerTimeoutMs, "headerTimeouts");
    noDelay(conn);
    try {
      const http = serveHttp(conn);
      if (open.has(conn)) open.set(conn, http);
      for (;;) {
        let event: LegacyRequestEvent | null;
        try {
          event = await http.nextRequest();
        } catch {
          break;
        }
        // Null also while an answer is still streaming: the client closed its
        // side, which the runtime would notice on the write side only at the
        // next write (an SSE keep-alive, many seconds later).
        if (event === null) break;
        disarm();
        active++;
        const answering: Promise<void> = respond(event, conn).finally(() => {
          responding.delete(answering);
          lastAnswerEnded = performance.now();
          active--;
          if (active === 0 && open.has(conn)) arm(limits.idleTimeoutMs, "idleTimeouts");
        });
        responding.add(answering);
      }
    } catch {
      // The socket failed before HTTP started (a TLS handshake, a reset).
    } finally {
      disarm();
      closeConn(conn);
    }
  };

  /** Every answer being written, on every connection. */
  const responding = new Set<Promise<void>>();
  let lastAnswerEnded = Number.NEGATIVE_INFINITY;

  const respond = async (event: LegacyRequestEvent, conn: Deno.Conn) => {
    let response: Response;
    try {
      response = await options.handler(event.request, {
        remoteAddr: conn.remoteAddr as Deno.NetAddr,
      });
    } catch (error) {
      response = options.onError(error);
    }
    if (!isEventStream(response)) {
      try {
        await event.respondWith(await withLength(response));
      } catch {
        // The client went away before its answer was written.
      }
      return;
    }
    const bounded = boundUnread(response, limits.maxUnreadBytes, () => {
      stats.unreadClosed++;
      closeConn(conn);
    });
    let mine = streaming.get(conn);
    if (mine === undefined) streaming.set(conn, mine = new Set());
    mine.add(bounded.abandon);
    if (!open.has(conn)) bounded.abandon("The connection closed.");
    try {
      await event.respondWith(bounded.response);
    } catch {
      // The client went away; the route's own bookkeeping (cancellation,
      // audit) has seen the body stream cancelled.
    } finally {
      mine.delete(bounded.abandon);
    }
  };

  const acceptLoop = async () => {
    let backoff = BACKOFF_MIN_MS;
    while (accepting) {
      let conn: Deno.Conn;
      try {
        conn = await socket.accept();
      } catch (error) {
        if (!accepting || error instanceof Deno.errors.BadResource) break;
        // EMFILE, ENFILE, ECONNABORTED: the socket stays open and the next
        // accept may succeed once descriptors are free again.
        stats.acceptErrors++;
        sinceReport++;
        const now = performance.now();
        if (now - lastReport >= reportEvery) {
          options.onAcceptError(
            error instanceof Error ? error.message : String(error),
            sinceReport,
            stats.acceptErrors,
          );
          lastReport = now;
          sinceReport = 0;
        }
        await sleep(backoff);
        backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
        continue;
      }
      backoff = BACKOFF_MIN_MS;
      stats.accepted++;
      if (open.size >= limits.maxConnections) {
        // Closing at once frees the descriptor: the flood cannot grow past the limit.
        stats.refused++;
        try {
          conn.close();
        } catch {
          // already gone
        }
        continue;
      }
      open.set(conn, null);
      stats.open = open.size;
      void serveConnection(conn);
    }
    if (open.size === 0) allClosed.resolve();
  };
  void acceptLoop();

  const listener: HttpListener = {
    addr: socket.addr,
    stats,
    stopAccepting() {
      if (!accepting) return;
      accepting = false;
      try {
        socket.close();
      } catch {
        // already closed
      }
      if (open.size === 0) allClosed.resolve();
    },
    async answersSent(timeoutMs) {
      let timer: Timer | undefined;
      const late = new Promise<false>((resolve) => timer = after(timeoutMs, () => resolve(false)));
      const sent = (async () => {
        while (responding.size > 0) await Promise.allSettled([...responding]);
        // The last bytes of an answer that just ended are still leaving
        // through the runtime's event loop; on loopback and on any live
        // client one short wait is ample, and it is paid only when an answer
        // ended just now.
        const wait = lastAnswerEnded + FLUSH_GRACE_MS - performance.now();
        if (wait > 0) await sleep(wait);
        return true;
      })();
      try {
        return await Promise.race([sent, late]);
      } finally {
        timer?.cancel();
      }
    },
    closeConnections() {
      for (const conn of [...open.keys()]) closeConn(conn);
    },
    finished: allClosed.promise,
  };
  return { ok: true, listener };
}

/**
 * Turns Nagle's algorithm off on a TCP socket (a TLS one's is underneath,
 * and keeps the default). An answer leaves as several small writes (the
 * head, each event of a stream, the end of a chunked body): with Nagle on,
 * each write after the first waits for the client's acknowledgement of the
 * one before, which a client delays up to 40 ms, so a tool call over HTTP
 * took 10 to 50 ms instead of a few.
 */
export function noDelay(conn: Deno.Conn): void {
  if ("setNoDelay" in conn && typeof conn.setNoDelay === "function") {
    try {
      (conn as Deno.TcpConn).setNoDelay(true);
    } catch {
      // A socket already closed by its client: the serve loop sees it next.
    }
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream");
}

/**
 * Every answer but an event stream is a small body built whole in memory:
 * sent with its `Content-Length` (the per-connection server would otherwise
 * chunk it), as `Deno.serve` did.
 */
async function withLength(response: Response): Promise<Response> {
  if (response.body === null) return response;
  const bytes = new Uint8Array(await response.arrayBuffer());
  const headers = new Headers(response.headers);
  headers.set("content-length", String(bytes.byteLength));
  return new Response(bytes, { status: response.status, statusText: response.statusText, headers });
}
