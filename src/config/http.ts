/**
 * Validation of the `[http]` addresses: listen address, external origin,
 * allowed origins and hosts. Each value is normalised once here so the
 * transport compares plain strings.
 *
 * @module
 */
import { isLoopbackHost } from "./loopback.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";

const HOSTNAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6_CHARS = /^[0-9a-f:.]+$/;

interface HostPort {
  readonly host: string;
  readonly port: string | null;
}

/** Splits `host`, `host:port`, `[v6]` or `[v6]:port`; null when malformed. */
function splitHostPort(text: string): HostPort | null {
  const lower = text.toLowerCase();
  let host: string;
  let rest: string;
  if (lower.startsWith("[")) {
    const close = lower.indexOf("]");
    if (close < 0) return null;
    host = lower.slice(0, close + 1);
    rest = lower.slice(close + 1);
    if (!IPV6_CHARS.test(host.slice(1, -1)) || !host.includes(":")) return null;
  } else {
    const colon = lower.indexOf(":");
    host = colon < 0 ? lower : lower.slice(0, colon);
    rest = colon < 0 ? "" : lower.slice(colon);
    if (!HOSTNAME.test(host) && !IPV4.test(host)) return null;
  }
  if (rest === "") return { host, port: null };
  const port = rest.slice(1);
  if (!rest.startsWith(":") || !/^\d{1,5}$/.test(port) || Number(port) > 65535) return null;
  return { host, port: String(Number(port)) };
}

export { isLoopbackHost };

/**
 * Checks a listen address `HOST:PORT` (port 0 asks the OS for a free port).
 *
 * @returns the normalised `host:port`, or a sentence naming `label`
 */
export function checkListen(value: string, label: string): Checked<string> {
  const parsed = splitHostPort(value);
  if (parsed === null || parsed.port === null) {
    return fail(
      `${label} is ${
        quote(value)
      }, but it must be HOST:PORT (for example "127.0.0.1:8080" or "[::1]:8080").`,
    );
  }
  return pass(`${parsed.host}:${parsed.port}`);
}

/** Host part of a `host:port` listen address. */
export function listenHost(listen: string): string {
  return listen.slice(0, listen.lastIndexOf(":"));
}

/**
 * Checks an external origin such as `https://mcp.example.com`. Plain `http`
 * is accepted only for loopback: OAuth 2.1 requires TLS for every other
 * authorization-server endpoint.
 *
 * @returns the origin without a trailing slash, or a sentence naming `label`
 */
export function checkBaseUrl(value: string, label: string): Checked<string> {
  const origin = checkOrigin(value, label);
  if (!origin.ok) return origin;
  const url = new URL(origin.value);
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return fail(
      `${label} is ${
        quote(value)
      }, but an external base URL must use https (plain http only for a loopback host).`,
    );
  }
  return origin;
}

/**
 * Checks a browser origin (`scheme://host[:port]`, no path).
 *
 * @returns the normalised origin, or a sentence naming `label`
 */
export function checkOrigin(value: string, label: string): Checked<string> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(
      `${label} is ${quote(value)}, which is not a URL such as "https://mcp.example.com".`,
    );
  }
  const bare = (url.pathname === "/" || url.pathname === "") && url.search === "" &&
    url.hash === "" && url.username === "" && url.password === "" && !value.includes("?") &&
    !value.includes("#");
  if ((url.protocol !== "https:" && url.protocol !== "http:") || !bare) {
    return fail(
      `${label} is ${
        quote(value)
      }, but it must be an http(s) origin with no path, query or credentials, such as "https://mcp.example.com".`,
    );
  }
  return pass(url.origin);
}

/**
 * Checks an allowed `Host` header value (`host` or `host:port`).
 *
 * @returns the lower-cased value, or a sentence naming `label`
 */
export function checkHost(value: string, label: string): Checked<string> {
  const parsed = splitHostPort(value);
  if (parsed === null) {
    return fail(
      `${label} is ${
        quote(value)
      }, but it must be a host name or address, optionally with ":PORT".`,
    );
  }
  return pass(parsed.port === null ? parsed.host : `${parsed.host}:${parsed.port}`);
}
