/**
 * The listen address and the externally visible origin of the HTTP server.
 *
 * The origin matters for security, not only for links: it is the OAuth
 * issuer, the token audience (`${origin}/mcp`) and one of the names the
 * Host/Origin check accepts. Behind a proxy or tunnel the operator sets
 * `[http] base_url`; otherwise it is derived from the address we bound.
 *
 * @module
 */
import { isLoopbackHost } from "../../config/mod.ts";

/** A parsed `HOST:PORT` listen address. */
export interface ListenAddress {
  /** Host as written, IPv6 in brackets (`[::1]`), lower-cased. */
  readonly host: string;
  /** Host as `Deno.serve` wants it (IPv6 without brackets). */
  readonly hostname: string;
  /** Port number; 0 asks the OS for a free one. */
  readonly port: number;
}

export type ParseListenResult =
  | { readonly ok: true; readonly address: ListenAddress }
  | { readonly ok: false; readonly message: string };

const HOSTNAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const IPV6_BODY = /^[0-9a-f:.]+$/;

/**
 * Parses `HOST:PORT` (`127.0.0.1:8080`, `[::1]:0`, `localhost:8080`).
 *
 * @example
 * ```ts
 * parseListen("[::1]:8080"); // { ok: true, address: { host: "[::1]", hostname: "::1", port: 8080 } }
 * ```
 */
export function parseListen(text: string): ParseListenResult {
  const bad = {
    ok: false,
    message:
      `The listen address "${text}" must be HOST:PORT (for example "127.0.0.1:8080" or "[::1]:8080").`,
  } as const;
  const lower = text.trim().toLowerCase();
  const colon = lower.lastIndexOf(":");
  if (colon <= 0) return bad;
  const host = lower.slice(0, colon);
  const portText = lower.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) return bad;
  let hostname: string;
  if (host.startsWith("[") && host.endsWith("]")) {
    hostname = host.slice(1, -1);
    if (!IPV6_BODY.test(hostname) || !hostname.includes(":")) return bad;
  } else {
    if (host.includes(":") || !HOSTNAME.test(host)) return bad;
    hostname = host;
  }
  return { ok: true, address: { host, hostname, port: Number(portText) } };
}

/** True for names and addresses no other machine can reach (the one shared predicate). */
export const isLoopbackName: (host: string) => boolean = isLoopbackHost;

/** True for the wildcard addresses that listen on every interface. */
export function isWildcardName(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare === "0.0.0.0" || bare === "::" || bare === "0:0:0:0:0:0:0:0";
}

/** The `scheme://host:port` of the address actually bound. */
export function boundOrigin(address: ListenAddress, port: number, tls: boolean): string {
  return `${tls ? "https" : "http"}://${address.host}:${port}`;
}
