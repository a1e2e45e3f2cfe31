/**
 * The OAuth scopes of the HTTP transport and the tools each one opens.
 *
 * Two scopes, so an operator can hand a client the harmless half (read the
 * policy, ask for a verdict) without the half that runs programs.
 *
 * @module
 */
import type { Scope } from "../tools/caller.ts";

export type { Scope };

/** Every scope, in the order metadata and pages list them. */
export const SCOPES: readonly Scope[] = Object.freeze(["shell:read", "shell:execute"]);

/** What each scope allows, in words for the approval page and the docs. */
export const SCOPE_DESCRIPTIONS: ReadonlyMap<Scope, string> = new Map([
  ["shell:read", "read the policy and ask whether a command would be allowed (runs nothing)"],
  ["shell:execute", "run allowlisted commands inside the jail"],
]);

/** The scope each MCP tool needs; the transport and the tools both check it. */
export const TOOL_SCOPES: ReadonlyMap<string, Scope> = new Map([
  ["explain_command", "shell:read"],
  ["describe_policy", "shell:read"],
  ["run_command", "shell:execute"],
  // A session exists to run commands (and its report runs git): the execute half.
  ["session_start", "shell:execute"],
  ["session_end", "shell:execute"],
  // Reading one's own jobs is the read half; cancelling kills a process tree.
  ["job_status", "shell:read"],
  ["job_output", "shell:read"],
  ["job_list", "shell:read"],
  ["job_cancel", "shell:execute"],
]);

/** True when `value` names one of our scopes (a `Set` lookup, so `__proto__` is just unknown). */
export function isScope(value: string): value is Scope {
  return SCOPE_SET.has(value);
}

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);

/** The result of reading a space-separated `scope` parameter. */
export type ParseScopeResult =
  | { readonly ok: true; readonly scopes: ReadonlySet<Scope> }
  | { readonly ok: false; readonly unknown: string };

/**
 * Reads an RFC 6749 §3.3 scope string ("space-delimited, case-sensitive").
 * An unknown scope is refused rather than dropped, so a client never believes
 * it holds something it does not.
 *
 * @example
 * ```ts
 * parseScopeString("shell:read shell:execute"); // { ok: true, scopes: Set(2) }
 * ```
 */
export function parseScopeString(text: string): ParseScopeResult {
  const scopes = new Set<Scope>();
  for (const word of text.split(" ")) {
    if (word === "") continue;
    if (!isScope(word)) return { ok: false, unknown: word };
    scopes.add(word);
  }
  return { ok: true, scopes };
}

/** The scopes in canonical order, as an array (audit fields). */
export function scopeList(scopes: ReadonlySet<Scope>): string[] {
  return SCOPES.filter((scope) => scopes.has(scope));
}

/** Formats scopes in the canonical order, space-separated. */
export function formatScopes(scopes: ReadonlySet<Scope>): string {
  return SCOPES.filter((scope) => scopes.has(scope)).join(" ");
}
