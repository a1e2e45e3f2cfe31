/**
 * The default `PolicyIo`: the policy engine's only contact with the
 * filesystem, kept apart so the engine itself stays pure and tests can
 * inject their own. Any error (missing file, no read permission,
 * `NotCapable` under Deno's permission layer) yields null, which the engine
 * treats as "not the allowlisted file": it fails closed.
 *
 * @module
 */

import type { PolicyIo } from "./types.ts";

/**
 * The `PolicyIo` a server uses: resolves with `Deno.realPathSync`, null on
 * any error.
 */
export const SYSTEM_POLICY_IO: PolicyIo = Object.freeze({
  realPath(path: string): string | null {
    try {
      return Deno.realPathSync(path);
    } catch {
      return null;
    }
  },
});
