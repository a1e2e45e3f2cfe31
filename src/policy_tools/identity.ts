/**
 * Policy identity: the SHA-256 of the canonical form of a loaded policy, so
 * an audit record, `describe_policy` and `htmcp check` can say exactly which
 * policy judged a call, and two spellings of the same policy (comments,
 * order of keys, whitespace) have the same identity.
 *
 * The canonical form is the loaded policy's deciding content as JSON with
 * sorted keys, maps and sets as sorted arrays. Left out: startup warnings
 * (derived), the file's own path (moving a file does not change what it
 * decides) and the values of passed environment variables (their names are
 * kept; values can differ per machine and may be private).
 *
 * @module
 */
import type { Policy } from "../config/types.ts";

function canonical(value: unknown): unknown {
  if (value instanceof Map) {
    return [...value.entries()]
      .map(([key, entry]) => [String(key), canonical(entry)] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
  if (value instanceof Set) return [...value].map((item) => canonical(item)).sort();
  if (value instanceof RegExp) return { regex: value.source, flags: value.flags };
  if (Array.isArray(value)) return value.map((item) => canonical(item));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = canonical((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}

/**
 * The canonical JSON text of `policy`.
 *
 * @param policy The loaded policy.
 * @returns Deterministic JSON.
 */
export function canonicalPolicyJson(policy: Policy): string {
  const { warnings: _warnings, policyFile: _file, childEnv: _env, ...deciding } = policy;
  return JSON.stringify(canonical(deciding));
}

/**
 * The policy's identity, `sha256:` and 64 hex digits.
 *
 * @param policy The loaded policy.
 * @returns The hash, e.g. `sha256:9f86d0...`.
 *
 * @example
 * ```ts
 * import { policyHash } from "./identity.ts";
 * declare const policy: import("../config/types.ts").Policy;
 * console.log(await policyHash(policy)); // sha256:...
 * ```
 */
export async function policyHash(policy: Policy): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalPolicyJson(policy));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
