/**
 * The OAuth scopes of the HTTP transport and the tools each one opens.
 *
 * Two scopes for commands, so an operator can hand a client the harmless
 * half (read the policy, ask for a verdict) without the half that runs
 * programs; two for the audit log, so a client may read its own records
 * (`audit:read`) without seeing other clients' (`audit:full`, which only an
 * operator's client should hold).
 *
 * @module
 */
/** OAuth scopes of the HTTP transport. */
export type Scope = "shell:read" | "shell:execute" | "audit:read" | "audit:full";

/** Every scope, in the order metadata and pages list them. */
export const SCOPES: readonly Scope[] = Object.freeze([
  "shell:read",
  "shell:execute",
  "audit:read",
  "audit:full",
]);

/**
 * What a client gets when it names no scope (and what the 401 challenge
 * lists, which is what SDK clients then ask for): the command scopes. The
 * audit scopes are asked for by name: another client's records (commands,
 * working directories, client ids) are for an operator's client, and even a
 * client's own records are only served when the operator enabled the tool.
 */
export const DEFAULT_SCOPES: readonly Scope[] = Object.freeze(["shell:read", "shell:execute"]);

/**
 * The scopes a 401 challenge names, which SDK clients register and ask
 * for: the defaults, plus `audit:read` when the operator exposed the audit
 * tool (a client can then read its own records once the operator approves
 * that list). Never `audit:full`.
 *
 * @param auditExposed `[audit] expose_to_model`
 */
export function challengeScopes(auditExposed: boolean): readonly Scope[] {
  return auditExposed ? [...DEFAULT_SCOPES, "audit:read"] : DEFAULT_SCOPES;
}

/** What each scope allows, in words for the approval page and the docs. */
export const SCOPE_DESCRIPTIONS: ReadonlyMap<Scope, string> = new Map([
  ["shell:read", "read the policy and ask whether a command would be allowed (runs nothing)"],
  ["shell:execute", "run allowlisted commands inside the jail"],
  ["audit:read", "read its own recent audit records (audit_tail, when the operator enabled it)"],
  ["audit:full", "read every client's recent audit records (with audit:read)"],
]);

/** The scope each MCP tool needs; the transport and the tools both check it. */
export const TOOL_SCOPES: ReadonlyMap<string, Scope> = new Map([
  ["explain_command", "shell:read"],
  ["describe_policy", "shell:read"],
  ["run_command", "shell:execute"],
  // A session exists to run commands (and its report runs git): the execute half.
  ["session_start", "shell:execute"],
  ["session_end", "shell:execute"],
  // A link copies one jail file's bytes out: a read, the same a `cat` would show.
  ["create_file_link", "shell:read"],
  ["list_file_links", "shell:read"],
  ["revoke_file_link", "shell:read"],
  // Own records only; audit:full widens what it returns, never what it needs.
  ["audit_tail", "audit:read"],
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
  | {
    readonly ok: false;
    /** The first word that is not one of our scopes, for the error description. */
    readonly unknown: string;
  };

/**
 * Reads an RFC 6749 §3.3 scope string ("space-delimited, case-sensitive").
 * An unknown scope is refused rather than dropped, so a client never believes
 * it holds something it does not.
 *
 * @param text The `scope` parameter or field.
 * @returns The scopes named, or the first unknown word.
 *
 * @example
 * ```ts
 * import { parseScopeString } from "./mod.ts";
 *
 * parseScopeString("shell:read shell:execute"); // { ok: true, scopes: Set(2) }
 * parseScopeString("shell:read admin"); // { ok: false, unknown: "admin" }
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
