/**
 * The Deno permission set derived from a policy: one value, rendered as CLI
 * flags, JSON, a systemd unit, or a Worker `deno.permissions` object.
 *
 * Every grant carries the reason it exists, so `htmcp permissions` and
 * `htmcp check` can show an operator why the server may touch each path.
 *
 * @module
 */

/** How the server talks to its client; decides whether any socket is granted. */
export type Transport = "stdio" | "http";

/** One granted value (a path, `host:port` or env name) and why it is needed. */
export interface Grant {
  /** Exactly what is granted, as the flag or Worker option carries it. */
  readonly value: string;
  /** Why the server needs it, shown by `htmcp permissions` and `htmcp check`. */
  readonly reason: string;
}

/**
 * The complete permission set of one server process. `sys`, `ffi` and
 * `import` are never granted, so they have no field: every renderer denies
 * them explicitly.
 */
export interface PermissionSet {
  /** The transport the set was built for: only `http` grants a listening socket. */
  readonly transport: Transport;
  /** Absolute paths the server may read. */
  readonly read: readonly Grant[];
  /** Absolute paths the server may write: the audit log file and the state dir only. */
  readonly write: readonly Grant[];
  /** Absolute paths of the programs the server may spawn. */
  readonly run: readonly Grant[];
  /**
   * `host:port` the server may listen on (HTTP only) or connect to (an
   * external identity provider; the PostgreSQL state store).
   */
  readonly net: readonly Grant[];
  /** Environment variable names the server may read. */
  readonly env: readonly Grant[];
  /**
   * Paths denied for writing even if another flag grants them: the jail and
   * every folder that holds a program we run (defence in depth for a unit
   * file or wrapper that appends a broader `--allow-write`).
   */
  readonly denyWrite: readonly Grant[];
}

/** Why a permission set could not be built. */
export type PermissionSetErrorCode =
  | "UNSAFE_WRITE_GRANT"
  | "UNSAFE_READ_GRANT"
  | "BAD_LISTEN_ADDRESS"
  | "NOT_ABSOLUTE"
  | "NOT_REPRESENTABLE";

/** The set, or the code and sentence naming the grant that would undo the layer. */
export type PermissionSetResult =
  | { readonly ok: true; readonly set: PermissionSet }
  | { readonly ok: false; readonly code: PermissionSetErrorCode; readonly reason: string };

/** Inputs besides the policy. */
export interface PermissionOptions {
  /** How the server will talk to its client. */
  readonly transport: Transport;
  /**
   * Programs the server itself starts around the allowlisted ones (the
   * launcher helper `htmcp-spawn`, which starts everything else), as returned
   * by `executor.launcherPaths()`. Absolute paths.
   */
  readonly launcherPaths: readonly string[];
  /**
   * Files the executor reads once at startup to verify its helper (the
   * build's manifest with the helper's SHA-256, and the helper's source), as
   * returned by `launcherReadPaths()`. Absolute paths; read only.
   */
  readonly launcherReads?: readonly string[];
  /** `host:port` from `--http`, overriding `[http] listen`. */
  readonly listen?: string | null;
}
