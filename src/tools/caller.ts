/**
 * Who is calling a tool, as the transport established it.
 *
 * @module
 */

import type { Scope } from "../auth/scopes.ts";

/** The OAuth scopes (`src/auth/scopes.ts`), named here beside the caller that holds them. */
export type { Scope };

/**
 * Who is calling a tool, as the transport established it (stdio: the
 * operator's own client; HTTP: the verified bearer token, or none on an
 * unauthenticated loopback listener). Every tool call is handed it, its
 * client id is on every audit record of the call, and each tool checks it
 * against the scope it needs.
 */
export interface CallerIdentity {
  /** The transport the call came in on. */
  readonly transport: "stdio" | "http";
  /** OAuth client id, or null for stdio and for unauthenticated loopback HTTP. */
  readonly clientId: string | null;
  /**
   * Granted scopes, or null when the transport does not use scopes (stdio: the
   * operator's own MCP client started this process, so it may use every tool).
   */
  readonly scopes: ReadonlySet<Scope> | null;
  /**
   * The MCP protocol era the call came in (`2026-07-28` for the stateless
   * era); absent for 2025-era connections (sessions, `initialize`).
   */
  readonly protocolEra?: string;
}

/** The protocol revision of the stateless era, as callers and audit records name it. */
export const MODERN_ERA = "2026-07-28";

/** The stdio caller: the local operator's own client. */
export const STDIO_CALLER: CallerIdentity = Object.freeze({
  transport: "stdio",
  clientId: null,
  scopes: null,
});

/** True when `caller` may use a tool that needs `scope`. */
export function hasScope(caller: CallerIdentity, scope: Scope): boolean {
  return caller.scopes === null || caller.scopes.has(scope);
}
