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
  /** `stdio` or `http`, as in the set. */
  readonly transport: PermissionSet["transport"];
  /** Paths readable, each with its reason. */
  readonly read: readonly Grant[];
  /** Paths writable, each with its reason. */
  readonly write: readonly Grant[];
  /** Programs the server may spawn, each with its reason. */
  readonly run: readonly Grant[];
  /** `host:port` values the server may listen on or connect to. */
  readonly net: readonly Grant[];
  /** Environment variable names readable. */
  readonly env: readonly Grant[];
  /** Paths denied for writing whatever else grants them. */
  readonly deny_write: readonly Grant[];
  /** The kinds never granted, each with why. */
  readonly never_granted: typeof NEVER_GRANTED;
  /** The same set as `deno run` flags, in order. */
  readonly flags: readonly string[];
}

/**
 * The set as `htmcp permissions --format json` prints it: for scripts and
 * reviews that diff the grants of two policies.
 *
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
