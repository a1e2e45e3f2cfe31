/**
 * The one loopback predicate of every layer (listen addresses, `auth.mode =
 * "none"`, OAuth issuers and redirect URIs, client metadata URLs, the HTTP
 * transport's remote addresses): one answer for one input everywhere, so no
 * layer can call "this machine" what another calls "the network".
 *
 * @module
 */

const LOOPBACK_V4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * True for names and addresses no other machine can reach: `localhost`,
 * `127.0.0.0/8`, `::1` (bracketed or not) and the IPv4-mapped
 * `::ffff:127.x.y.z`. Case-insensitive; anything else, including a name that
 * merely resolves to loopback today, is not loopback.
 *
 * @param host A host name or address (`url.hostname`, a remote address).
 * @returns Whether it is this machine's loopback.
 *
 * @example
 * ```ts
 * import { isLoopbackHost } from "./loopback.ts";
 * isLoopbackHost("[::1]"); // true
 * isLoopbackHost("127.0.0.1.evil.example"); // false
 * ```
 */
export function isLoopbackHost(host: string): boolean {
  const bare = (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host)
    .toLowerCase();
  if (bare === "localhost" || bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true;
  const v4 = bare.startsWith("::ffff:") ? bare.slice("::ffff:".length) : bare;
  const match = LOOPBACK_V4.exec(v4);
  return match !== null && match.slice(1).every((octet) => Number(octet) <= 255);
}
