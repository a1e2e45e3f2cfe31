/**
 * `[sandbox] network_allow` entries and the one predicate that decides
 * whether the egress proxy may open a connection to `host:port`. Pure.
 *
 * An entry is `HOST:PORT` where HOST is a DNS name (`registry.npmjs.org`),
 * a wildcard of subdomains (`*.example.com`: any name ending in
 * `.example.com`, never `example.com` itself), an IPv4 literal, or an IPv6
 * literal in brackets (`[::1]`). The port is always explicit: "any port" on a
 * host is how a listed web server becomes a route to its SSH or database
 * port, so there is no such entry.
 *
 * Names are compared in lower case with any trailing dot removed, as DNS
 * does; nothing else is normalised, so a request for `127.1` does not match
 * an entry `127.0.0.1` (the proxy refuses it rather than guess).
 *
 * @module
 */
import type { EgressRule } from "../config/types.ts";

export type { EgressRule };

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^\[[0-9a-f:.]{2,45}\]$/;

/**
 * Parses one `network_allow` entry.
 *
 * @param text The entry as written in the policy.
 * @returns The rule, or a sentence saying what is wrong with it.
 * @example
 * ```ts
 * parseEgressRule("*.example.com:443"); // { ok: true, rule: { kind: "subdomains", ... } }
 * ```
 */
export function parseEgressRule(
  text: string,
): { ok: true; rule: EgressRule } | { ok: false; reason: string } {
  const colon = text.lastIndexOf(":");
  const bad = (why: string) => ({
    ok: false as const,
    reason:
      `"${text}" is not HOST:PORT (${why}); write for example "packages.example.org:443" or "*.example.com:443".`,
  });
  if (colon <= 0) return bad("no port");
  const portText = text.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return bad("the port is not a number");
  const port = Number(portText);
  if (port < 1 || port > 65_535) return bad("the port is not from 1 to 65535");
  const host = normaliseHost(text.slice(0, colon));
  if (host === null) return bad("the host is empty");
  if (IPV6.test(host)) {
    return { ok: true, rule: Object.freeze({ text, kind: "exact", host, port, literal: true }) };
  }
  if (IPV4.test(host)) {
    return { ok: true, rule: Object.freeze({ text, kind: "exact", host, port, literal: true }) };
  }
  const wildcard = host.startsWith("*.");
  const name = wildcard ? host.slice(2) : host;
  const labels = name.split(".");
  if (name.includes("*")) return bad('"*" is allowed only as the whole first label, "*.NAME"');
  if (!labels.every((label) => LABEL.test(label))) return bad("the host is not a DNS name");
  // "*.com" would allow a whole top-level domain: nobody means that.
  if (wildcard && labels.length < 2) return bad("a wildcard needs at least two labels after *.");
  return {
    ok: true,
    rule: Object.freeze({
      text,
      kind: wildcard ? "subdomains" : "exact",
      host: name,
      port,
      literal: false,
    }),
  };
}

/** Lower case, without one trailing dot; null when nothing is left. */
export function normaliseHost(host: string): string | null {
  const lower = host.toLowerCase();
  const trimmed = lower.endsWith(".") ? lower.slice(0, -1) : lower;
  return trimmed === "" ? null : trimmed;
}

/**
 * The rule that allows `host:port`, or null: the one egress predicate.
 *
 * @param rules The policy's `network_allow`.
 * @param host The host the client asked for (a name, or an IP literal; IPv6 in brackets).
 * @param port The port it asked for.
 */
export function findEgressRule(
  rules: readonly EgressRule[],
  host: string,
  port: number,
): EgressRule | null {
  const wanted = normaliseHost(host);
  if (wanted === null) return null;
  for (const rule of rules) {
    if (rule.port !== port) continue;
    if (rule.kind === "exact" && rule.host === wanted) return rule;
    if (rule.kind === "subdomains" && wanted.endsWith(`.${rule.host}`)) return rule;
  }
  return null;
}

/**
 * The Deno `--allow-net` value for `rule`: Deno reads `*.example.com:443`
 * as that name and every name below it (verified on 2.9.6), a superset of
 * the proxy's own rule, which stays the first check.
 */
export function denoNetGrant(rule: EgressRule): string {
  return rule.kind === "subdomains" ? `*.${rule.host}:${rule.port}` : `${rule.host}:${rule.port}`;
}
