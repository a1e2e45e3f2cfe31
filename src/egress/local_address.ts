/**
 * Which resolved addresses are "the host itself or its private networks":
 * loopback, RFC 1918, link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, unspecified, and their IPv6 counterparts. Pure.
 *
 * Why: a listed *name* (`*.example.com:443`) can be made to resolve to
 * 127.0.0.1 by whoever controls its DNS, which would turn the allowlist into
 * a route to the host's own services. A listed IP literal is the operator
 * naming that address on purpose, so only names are held to this.
 *
 * @module
 */

/**
 * True when `ip` (as Deno reports a connection's remote address) is local.
 *
 * @param ip An IPv4 or IPv6 address in text form.
 */
export function isLocalAddress(ip: string): boolean {
  const lower = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped !== null) return isLocalIpv4(mapped[1] as string);
  if (/^\d+\.\d+\.\d+\.\d+$/.test(lower)) return isLocalIpv4(lower);
  if (lower === "::1" || lower === "::") return true;
  // fc00::/7 unique local, fe80::/10 link-local.
  return /^f[cd][0-9a-f]{0,2}:/.test(lower) || /^fe[89ab][0-9a-f]?:/.test(lower);
}

function isLocalIpv4(ip: string): boolean {
  const [a = 0, b = 0] = ip.split(".").map(Number);
  return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
}
