/**
 * Renders a `PermissionSet` as JSON for operators and tooling: every grant
 * with its reason, the kinds that are never granted with why, and the exact
 * flags, so one document answers "what may this server touch, and why".
 *
 * @module
 */
import { renderDenoFlags } from "./render_flags.ts";
import type { Grant, PermissionSet } from "./types.ts";

/** Why each never-granted kind stays empty. */
export const NEVER_GRANTED: Readonly<Record<"sys" | "ffi" | "import", string>> = Object.freeze({
  sys: "nothing the server does needs OS information (hostname, memory, interfaces)",
  ffi: "no native library is loaded",
  import: "all code is local or from the npm cache; remote imports are denied, default hosts too",
});

/** The JSON shape of `htmcp permissions --format json`. */
export interface PermissionSetJson {
  readonly transport: PermissionSet["transport"];
  readonly read: readonly Grant[];
  readonly write: readonly Grant[];
  readonly run: readonly Grant[];
  readonly net: readonly Grant[];
  readonly env: readonly Grant[];
  readonly deny_write: readonly Grant[];
  readonly never_granted: typeof NEVER_GRANTED;
  readonly flags: readonly string[];
}

/**
 * @param set The permission set.
 * @returns A plain object, ready for `JSON.stringify`.
 */
export function permissionSetToJson(set: PermissionSet): PermissionSetJson {
  return {
    transport: set.transport,
    read: set.read,
    write: set.write,
    run: set.run,
    net: set.net,
    env: set.env,
    deny_write: set.denyWrite,
    never_granted: NEVER_GRANTED,
    flags: renderDenoFlags(set),
  };
}
