/**
 * Renders a `PermissionSet` as the `deno.permissions` option of a Worker
 * (`--unstable-worker-options`, still required on Deno 2.9.6). A Worker's
 * grants must be a subset of its parent's when it is created; after that
 * they are its own, and revoking the parent's leaves them intact (verified).
 *
 * @module
 */
import type { PermissionSet } from "./types.ts";

/** The Worker permission object: `false` for none, a list for scoped grants. */
export interface WorkerPermissions {
  /** Readable paths, or `false` for none. */
  readonly read: readonly string[] | false;
  /** Writable paths, or `false` for none. */
  readonly write: readonly string[] | false;
  /** Programs the Worker may spawn, or `false` for none. */
  readonly run: readonly string[] | false;
  /** `host:port` values, or `false` for none. */
  readonly net: readonly string[] | false;
  /** Environment variable names, or `false` for none. */
  readonly env: readonly string[] | false;
  /** Never granted: see `NEVER_GRANTED`. */
  readonly sys: false;
  /** Never granted: see `NEVER_GRANTED`. */
  readonly ffi: false;
  /** `false` also blocks the default remote-import hosts (verified), unlike a bare --deny-import. */
  readonly import: false;
}

/**
 * The set as a Worker's `deno.permissions`, for running the server's core
 * confined when the process itself was started with broader permissions.
 *
 * @param set The permission set.
 * @returns The object for `new Worker(url, { deno: { permissions } })`.
 * @example
 * ```ts
 * import { type PermissionSet, workerPermissions } from "./mod.ts";
 * declare const set: PermissionSet;
 * const url = new URL("./core.ts", import.meta.url);
 * // The `deno` option needs --unstable-worker-options; Deno's types list it separately.
 * const options = { type: "module", deno: { permissions: workerPermissions(set) } };
 * new Worker(url, options as WorkerOptions);
 * ```
 */
export function workerPermissions(set: PermissionSet): WorkerPermissions {
  const list = (grants: PermissionSet["read"]) =>
    grants.length === 0 ? false as const : Object.freeze(grants.map((grant) => grant.value));
  return Object.freeze({
    read: list(set.read),
    write: list(set.write),
    run: list(set.run),
    net: list(set.net),
    env: list(set.env),
    sys: false,
    ffi: false,
    import: false,
  });
}
