/**
 * Typed access to `Deno.serveHttp`, the runtime's HTTP/1.1 server for one
 * accepted connection. Deno 2 still ships it (verified on 2.9.6) but no
 * longer declares it; these are the few members htmcp uses. If a later Deno
 * drops it, `legacyServeHttp()` returns null and the server refuses to start
 * with a sentence saying so, rather than serving without connection limits.
 *
 * @module
 */

/** One request on a connection. */
export interface LegacyRequestEvent {
  readonly request: Request;
  respondWith(response: Response | Promise<Response>): Promise<void>;
}

/** The HTTP side of one connection. */
export interface LegacyHttpConn {
  /** The next request, or null when the client closed the connection. */
  nextRequest(): Promise<LegacyRequestEvent | null>;
  close(): void;
}

type ServeHttp = (conn: Deno.Conn) => LegacyHttpConn;

/** `Deno.serveHttp` bound to `Deno`, or null when this runtime lacks it. */
export function legacyServeHttp(): ServeHttp | null {
  const candidate = (Deno as unknown as { readonly serveHttp?: unknown }).serveHttp;
  if (typeof candidate !== "function") return null;
  return (conn) => (candidate as ServeHttp).call(Deno, conn);
}
