/**
 * The egress proxy: the one way out of a sandbox with
 * `[sandbox] network = "allowlist"`. It runs in the server, outside every
 * sandbox, listening on a Unix socket that the launcher binds into each
 * sandbox (where a forwarder turns it into `127.0.0.1:3128`). It speaks
 * HTTP CONNECT and plain HTTP proxying, and opens a connection only to a
 * `network_allow` destination.
 *
 * Denies on failure: a request it cannot read, a destination not listed, a
 * listed name that resolves to a local address, a full connection table or
 * an audit log that cannot record the decision (fail mode closed) is
 * answered with an HTTP error whose body says why, and nothing is connected.
 * Every decision is audited before any byte goes upstream (`egress`), and
 * every allowed connection again when it ends, with its byte counts
 * (`egress_end`).
 *
 * What it does not do: look inside TLS (CONNECT tunnels are opaque bytes to
 * an allowed host:port), or know which command opened a connection (all
 * sandboxes share one socket; records carry the time).
 *
 * @module
 */
import type { AuditFailMode } from "../config/types.ts";
import type { AuditEventFields, AuditLog } from "../audit/mod.ts";
import { after } from "../timers/mod.ts";
import { type EgressRule, findEgressRule } from "./rules.ts";
import { MAX_HEAD_BYTES, parseProxyRequest } from "./request_head.ts";
import { isLocalAddress } from "./local_address.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** A sandboxed command asked the egress proxy for a connection; the decision. */
    egress: {
      readonly connection: string;
      readonly verdict: "allowed" | "refused";
      readonly method: string | null;
      readonly host: string | null;
      readonly port: number | null;
      readonly rule: string | null;
      readonly reason: string;
    };
    /** An allowed egress connection ended (or could not be opened). */
    egress_end: {
      readonly connection: string;
      readonly host: string;
      readonly port: number;
      readonly connected: boolean;
      readonly bytes_up: number;
      readonly bytes_down: number;
      readonly duration_ms: number;
      readonly reason: string;
    };
  }
}

/** What the proxy needs. */
export interface EgressProxyOptions {
  /** The listening Unix socket (`listenOnFreeSlot`) and its path. */
  readonly listener: Deno.Listener;
  /** The socket's path, removed again by `close`. */
  readonly socketPath: string;
  /** `[sandbox] network_allow`: the only destinations a request may name. */
  readonly rules: readonly EgressRule[];
  /** Where each allowed and refused connection is recorded. */
  readonly audit: Pick<AuditLog, "writeEvent">;
  /** `closed`: a connection whose audit record could not be written is never opened (503). */
  readonly failMode: AuditFailMode;
  /** Connections open at once (default 256); beyond, 503. */
  readonly maxConnections?: number;
  /** How long a client may take to send its request head (default 10 s). */
  readonly headTimeoutMs?: number;
}

/** A running proxy. */
export interface EgressProxy {
  /** The socket the in-sandbox forwarder connects to. */
  readonly socketPath: string;
  /** Stops accepting, ends open connections, removes the socket. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/**
 * Starts the proxy.
 *
 * @returns The proxy, or why it could not listen (one sentence).
 */
export function startEgressProxy(
  options: EgressProxyOptions,
): { ok: true; proxy: EgressProxy } | { ok: false; message: string } {
  const listener = options.listener;
  try {
    // Only the socket's owner may connect; the server hands it to the uid
    // commands run as once the executor has chosen it.
    Deno.chmodSync(options.socketPath, 0o600);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    listener.close();
    return {
      ok: false,
      message: `Cannot start the egress proxy on "${options.socketPath}": ${why}.`,
    };
  }
  const open = new Set<Deno.Conn>();
  const handlers = new Set<Promise<void>>();
  const max = options.maxConnections ?? 256;
  let closed = false;
  const accepting = (async () => {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        if (closed) return;
        continue;
      }
      if (open.size >= max) {
        await answer(conn, 503, "the egress proxy has too many open connections; try again");
        continue;
      }
      open.add(conn);
      const handled = handleConnection(conn, options, open).finally(() => {
        open.delete(conn);
        handlers.delete(handled);
      });
      handlers.add(handled);
    }
  })();
  const proxy: EgressProxy = {
    socketPath: options.socketPath,
    async close() {
      if (closed) return;
      closed = true;
      listener.close();
      for (const conn of open) closeQuietly(conn);
      await accepting;
      await Promise.allSettled([...handlers]);
      await Deno.remove(options.socketPath).catch(() => {});
    },
  };
  return { ok: true, proxy };
}

async function handleConnection(
  client: Deno.Conn,
  options: EgressProxyOptions,
  open: Set<Deno.Conn>,
): Promise<void> {
  const connection = crypto.randomUUID();
  const audit = (
    fields: Omit<AuditEventFields["egress"], "connection">,
  ) => options.audit.writeEvent("egress", { connection, ...fields });
  // A request we could not read or parse names no destination: refused, audited, answered.
  const refuseUnread = async (status: number, reason: string) => {
    await audit({ verdict: "refused", method: null, host: null, port: null, rule: null, reason });
    await answer(client, status, reason);
  };
  const head = await readHead(client, options.headTimeoutMs ?? 10_000);
  if (!head.ok) return await refuseUnread(400, head.reason);
  const request = parseProxyRequest(head.text);
  if (!request.ok) return await refuseUnread(request.status, request.reason);
  const { host, port, method } = request;
  const rule = findEgressRule(options.rules, host, port);
  if (rule === null) {
    const reason =
      `"${host}:${port}" is not in this server's [sandbox] network_allow, so the sandbox may not connect to it`;
    await audit({ verdict: "refused", method, host, port, rule: null, reason });
    await answer(client, 403, reason);
    return;
  }
  const logged = await audit({
    verdict: "allowed",
    method,
    host,
    port,
    rule: rule.text,
    reason: `allowed by network_allow "${rule.text}"`,
  });
  if (!logged.ok && options.failMode === "closed") {
    await answer(client, 503, "the audit log cannot record this connection, so it is not opened");
    return;
  }
  const started = performance.now();
  const end = (fields: { connected: boolean; up: number; down: number; reason: string }) =>
    options.audit.writeEvent("egress_end", {
      connection,
      host,
      port,
      connected: fields.connected,
      bytes_up: fields.up,
      bytes_down: fields.down,
      duration_ms: Math.round(performance.now() - started),
      reason: fields.reason,
    });
  let upstream: Deno.TcpConn;
  try {
    upstream = await Deno.connect({ hostname: host.replace(/^\[|\]$/g, ""), port });
  } catch (error) {
    const why = error instanceof Error ? error.name : "error";
    const reason = `connecting to "${host}:${port}" failed (${why})`;
    await end({ connected: false, up: 0, down: 0, reason });
    await answer(client, 502, reason);
    return;
  }
  const remote = upstream.remoteAddr.hostname;
  if (!rule.literal && isLocalAddress(remote)) {
    // A listed name must not become a route to the host's own services.
    closeQuietly(upstream);
    const reason =
      `"${host}" resolved to the local address ${remote}; a listed name may not lead to the host or its private networks (list the address itself to allow it)`;
    await end({ connected: false, up: 0, down: 0, reason });
    await answer(client, 403, reason);
    return;
  }
  open.add(upstream);
  let up = head.rest.length;
  let down = 0;
  try {
    if (request.kind === "connect") {
      await writeAll(client, encoder.encode("HTTP/1.1 200 Connection established\r\n\r\n"));
    } else {
      const bytes = encoder.encode(request.upstreamHead ?? "");
      await writeAll(upstream, bytes);
      up += bytes.length;
    }
    if (head.rest.length > 0) await writeAll(upstream, head.rest);
    const [sent, received] = await Promise.all([
      pump(client, upstream),
      pump(upstream, client),
    ]);
    up += sent;
    down = received;
  } catch {
    // Either side went away: the counts so far stand.
  } finally {
    open.delete(upstream);
    closeQuietly(upstream);
  }
  await end({ connected: true, up, down, reason: "closed" });
}

type Head = { ok: true; text: string; rest: Uint8Array } | { ok: false; reason: string };

/** Reads up to the blank line that ends the head, within the size and time bounds. */
async function readHead(conn: Deno.Conn, timeoutMs: number): Promise<Head> {
  const buffer = new Uint8Array(MAX_HEAD_BYTES);
  let length = 0;
  const timer = after(timeoutMs, () => closeQuietly(conn));
  try {
    while (length < buffer.length) {
      const n = await conn.read(buffer.subarray(length)).catch(() => null);
      if (n === null) return { ok: false, reason: "the client sent no complete request head" };
      length += n;
      const end = indexOfBlankLine(buffer, length);
      if (end >= 0) {
        // Latin-1: every byte maps to one character, so nothing is lost or invented.
        const text = String.fromCharCode(...buffer.subarray(0, end));
        return { ok: true, text, rest: buffer.slice(end + 4, length) };
      }
    }
    return { ok: false, reason: `the request head is larger than ${MAX_HEAD_BYTES} bytes` };
  } finally {
    timer.cancel();
  }
}

function indexOfBlankLine(bytes: Uint8Array, length: number): number {
  for (let i = 0; i + 3 < length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

/** Copies `from` to `to` until EOF, then half-closes `to`; returns the bytes copied. */
async function pump(from: Deno.Conn, to: Deno.Conn): Promise<number> {
  const buffer = new Uint8Array(64 * 1024);
  let total = 0;
  try {
    for (;;) {
      const n = await from.read(buffer);
      if (n === null) break;
      await writeAll(to, buffer.subarray(0, n));
      total += n;
    }
  } catch {
    // A reset or a closed socket ends this direction.
  }
  await to.closeWrite().catch(() => {});
  return total;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/** An HTTP error whose body says why, in words the model can act on; then close. */
async function answer(conn: Deno.Conn, status: number, reason: string): Promise<void> {
  const text = STATUS_TEXT.get(status) ?? "Error";
  const body = encoder.encode(`htmcp egress proxy: ${reason}.\n`);
  const head = `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  try {
    await writeAll(conn, new Uint8Array([...encoder.encode(head), ...body]));
  } catch {
    // The client left; nothing to tell.
  }
  closeQuietly(conn);
}

const STATUS_TEXT = new Map([
  [400, "Bad Request"],
  [403, "Forbidden"],
  [405, "Method Not Allowed"],
  [502, "Bad Gateway"],
  [503, "Service Unavailable"],
]);

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
