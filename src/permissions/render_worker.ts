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
  readonly read: readonly string[] | false;
  readonly write: readonly string[] | false;
  readonly run: readonly string[] | false;
  readonly net: readonly string[] | false;
  readonly env: readonly string[] | false;
  readonly sys: false;
  readonly ffi: false;
  /** `false` also blocks the default remote-import hosts (verified), unlike a bare --deny-import. */
  readonly import: false;
}

/**
 * @param set The permission set.
 * @returns The object for `new Worker(url, { deno: { permissions } })`.
 * @example
 * ```ts
 * new Worker(url, { type: "module", deno: { permissions: workerPermissions(set) } });
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
