/**
 * DNS-rebinding protection: a request whose `Host` or `Origin` names a site
 * other than this server is refused with 403 before any route runs.
 *
 * Threat: a web page on `evil.example` whose DNS name is re-pointed at
 * 127.0.0.1 makes the visitor's browser send requests to a local server. The
 * browser still sends `Host: evil.example` and `Origin: http://evil.example`,
 * so checking both names stops it (MCP 2025-11-25, Transports, "Security
 * Warning": servers MUST validate the Origin header). A missing `Origin` is
 * allowed: non-browser clients do not send one, and a browser always does on
 * the cross-origin requests this attack needs.
 *
 * @module
 */
import { isLoopbackName, isWildcardName, type ListenAddress } from "./address.ts";

/** What the check needs to know about where the server is reachable. */
export interface HostCheckSettings {
  readonly address: ListenAddress;
  /** The port actually bound (differs from `address.port` when that was 0). */
  readonly port: number;
  readonly tls: boolean;
  /** The externally visible origin, when the operator set one. */
  readonly baseUrl: string | null;
  /** `[http] allowed_origins`: exact origins. */
  readonly allowedOrigins: readonly string[];
  /** `[http] allowed_hosts`: `host` (any port) or `host:port`. */
  readonly allowedHosts: readonly string[];
}

export type HostCheckResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly header: "host" | "origin"; readonly reason: string };

/** A compiled allow-list; build once at startup with {@linkcode createHostCheck}. */
export interface HostCheck {
  /** Checks the request's `Host` and `Origin` headers. Reads headers only. */
  check(request: Request): HostCheckResult;
  /** The accepted `Host` values, for the startup log and docs. */
  readonly hosts: readonly string[];
  /** The accepted `Origin` values. */
  readonly origins: readonly string[];
}

const DEFAULT_PORTS: ReadonlyMap<string, string> = new Map([["http:", "80"], ["https:", "443"]]);

/**
 * Builds the allow-lists: the bound `host:port`, the loopback names when the
 * server listens on loopback or on every interface, the base URL's host, and
 * the operator's extra entries.
 */
export function createHostCheck(settings: HostCheckSettings): HostCheck {
  const scheme = settings.tls ? "https:" : "http:";
  const port = String(settings.port);
  const exactHosts = new Set<string>();
  const anyPortHosts = new Set<string>();
  const origins = new Set<string>();
  const addHostPort = (host: string, hostPort: string, protocol: string) => {
    exactHosts.add(`${host}:${hostPort}`);
    // A browser omits the scheme's default port from Host and Origin.
    if (DEFAULT_PORTS.get(protocol) === hostPort) exactHosts.add(host);
    origins.add(new URL(`${protocol}//${host}:${hostPort}`).origin);
  };

  const listenHost = settings.address.host;
  if (!isWildcardName(listenHost)) addHostPort(listenHost, port, scheme);
  if (isLoopbackName(listenHost) || isWildcardName(listenHost)) {
    for (const name of ["localhost", "127.0.0.1", "[::1]"]) addHostPort(name, port, scheme);
  }
  if (settings.baseUrl !== null) {
    const base = new URL(settings.baseUrl);
    const basePort = base.port === "" ? DEFAULT_PORTS.get(base.protocol) ?? "" : base.port;
    addHostPort(base.hostname, basePort, base.protocol);
  }
  for (const entry of settings.allowedHosts) {
    const lower = entry.toLowerCase();
    if (/:\d+$/.test(lower)) exactHosts.add(lower);
    else anyPortHosts.add(lower);
  }
  for (const entry of settings.allowedOrigins) {
    const origin = normalizeOrigin(entry);
    if (origin !== null) origins.add(origin);
  }

  return {
    hosts: [...exactHosts, ...[...anyPortHosts].map((host) => `${host}:*`)],
    origins: [...origins],
    check(request) {
      const host = (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
      if (!exactHosts.has(host) && !anyPortHosts.has(hostnameOf(host))) {
        return { ok: false, header: "host", reason: `The Host "${host}" is not this server.` };
      }
      const origin = request.headers.get("origin");
      if (origin !== null && !origins.has(normalizeOrigin(origin) ?? "")) {
        return {
          ok: false,
          header: "origin",
          reason: `The Origin "${origin}" is not allowed to call this server.`,
        };
      }
      return { ok: true };
    },
  };
}

/** `host` without its `:port`, brackets kept for IPv6. */
function hostnameOf(hostPort: string): string {
  const match = /^(.*):\d+$/.exec(hostPort);
  return match === null ? hostPort : match[1] as string;
}

/**
 * The serialized origin of `text`, or null for anything that is not an
 * http(s) origin (including the opaque `null` origin of sandboxed frames and
 * `file:` pages, which must never be trusted).
 */
function normalizeOrigin(text: string): string | null {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    return url.origin;
  } catch {
    return null;
  }
}
