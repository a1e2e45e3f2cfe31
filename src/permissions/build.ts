/**
 * `permissionSetFor` with the executor's launcher paths filled in: the one
 * way to get "the set for this policy". Every place that
 * needs "the set for this policy" (the CLI verbs, the task launcher, the
 * compile script, self-confinement) goes through here, so they agree.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { launcherPaths, launcherReadPaths } from "../exec/launcher.ts";
import { permissionSetFor } from "./permission_set.ts";
import type { PermissionSetResult, Transport } from "./types.ts";

/** The transport `serve` would pick: HTTP when `--http` or `[http] listen` is set. */
export function transportFor(policy: Policy, listen: string | null | undefined): Transport {
  return (listen ?? policy.http.listen) === null ? "stdio" : "http";
}

/**
 * Builds the permission set for `policy` as `serve` would run it.
 *
 * @param policy The loaded policy.
 * @param options The transport (default: what `serve` would pick) and an optional `--http` value.
 * @returns The set, or a refusal as one sentence.
 */
export function buildPermissionSet(
  policy: Policy,
  options: { readonly transport?: Transport; readonly listen?: string | null } = {},
): PermissionSetResult {
  // The launcher path is fixed by the executor's tools, not by probing: the
  // probes run once, when the server builds its executor under this set.
  const transport = options.transport ?? transportFor(policy, options.listen);
  return permissionSetFor(policy, {
    transport,
    launcherPaths: launcherPaths(),
    launcherReads: launcherReadPaths(),
    ...(options.listen === undefined ? {} : { listen: options.listen }),
  });
}
