/**
 * The first thing a client sends an HTTP proxy: `CONNECT host:port` (any
 * TCP stream, usually TLS) or a request with an absolute `http://` URL
 * (plain HTTP proxying). Pure: bytes in, the destination and the head to
 * send upstream out; anything else is refused with the HTTP status and a
 * sentence the model can read.
 *
 * @module
 */

/** Largest request head accepted (request line and headers). */
export const MAX_HEAD_BYTES = 16 * 1024;

/** Where the client wants to go, and what to send there first. */
export type ProxyRequest =
  | {
    readonly ok: true;
    readonly kind: "connect" | "http";
    readonly method: string;
    /** As asked (lower-cased name, or an IP literal; IPv6 in brackets). */
    readonly host: string;
    readonly port: number;
    /** For `http`: the rewritten head (origin-form target, `Connection: close`); null for CONNECT. */
    readonly upstreamHead: string | null;
  }
  | { readonly ok: false; readonly status: 400 | 405; readonly reason: string };

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers that belong to the hop to the proxy, never forwarded. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

/**
 * Reads the destination from a request head (without its final blank line).
 *
 * @param head The head as text (ISO-8859-1 decoded), lines joined by CRLF.
 * @returns The destination, or the status and reason to answer with.
 */
export function parseProxyRequest(head: string): ProxyRequest {
  const lines = head.split("\r\n");
  const [requestLine = "", ...headerLines] = lines;
  const parts = requestLine.split(" ");
  if (parts.length !== 3) return bad("the request line is not METHOD TARGET HTTP/1.x");
  const [method, target, version] = parts as [string, string, string];
  if (!TOKEN.test(method) || !/^HTTP\/1\.[01]$/.test(version)) {
    return bad("the request line is not METHOD TARGET HTTP/1.x");
  }
  const headers: [string, string][] = [];
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) return bad(`a header line is malformed`);
    headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  if (method === "CONNECT") {
    const authority = splitAuthority(target);
    if (authority === null) return bad(`CONNECT needs HOST:PORT, got "${printable(target)}"`);
    return { ok: true, kind: "connect", method, ...authority, upstreamHead: null };
  }
  if (!target.toLowerCase().startsWith("http://")) {
    return {
      ok: false,
      status: target.toLowerCase().startsWith("https://") ? 405 : 400,
      reason: target.toLowerCase().startsWith("https://")
        ? "https:// URLs go through CONNECT (set HTTPS_PROXY); this proxy does not terminate TLS"
        : `a proxy request needs an absolute http:// URL, got "${printable(target)}"`,
    };
  }
  const rest = target.slice("http://".length);
  const slash = rest.search(/[/?#]/);
  const authorityText = slash < 0 ? rest : rest.slice(0, slash);
  if (authorityText.includes("@")) return bad("credentials in the URL are not forwarded");
  const authority = splitAuthority(authorityText, 80);
  if (authority === null) return bad(`the URL's host is not HOST[:PORT]`);
  let path = slash < 0 ? "/" : rest.slice(slash);
  if (path.startsWith("?")) path = `/${path}`;
  const hash = path.indexOf("#");
  if (hash >= 0) path = path.slice(0, hash);
  const kept = headers.filter(([name]) => !HOP_HEADERS.has(name.toLowerCase()));
  // One request per connection: a second request on a kept-alive connection
  // would go to this host whatever URL it names, so the upstream is told to close.
  const upstreamHead = [
    `${method} ${path} ${version}`,
    ...kept.map(([name, value]) => `${name}: ${value}`),
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  return { ok: true, kind: "http", method, ...authority, upstreamHead };
}

/** `host:port` (port required unless `defaultPort`), IPv6 in brackets. */
function splitAuthority(
  text: string,
  defaultPort?: number,
): { host: string; port: number } | null {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null) return null;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port === undefined || port < 1 || port > 65_535) return null;
  return { host: (match[1] as string).toLowerCase(), port };
}

function bad(reason: string): ProxyRequest {
  return { ok: false, status: 400, reason };
}

/** At most 200 printable ASCII characters of `text`, for a message. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
}
