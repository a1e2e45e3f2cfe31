/**
 * The effectful side of `permissionSetFor`: asks the executor which helper
 * programs the server itself spawns, then builds the set. Every place that
 * needs "the set for this policy" (the CLI verbs, the task launcher, the
 * compile script, self-confinement) goes through here, so they agree.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { createExecutor } from "../exec/mod.ts";
import { permissionSetFor } from "./permission_set.ts";
import type { PermissionSetResult, Transport } from "./types.ts";

/** The transport `serve` would pick: HTTP when `--http` or `[http] listen` is set. */
export function transportFor(policy: Policy, listen: string | null | undefined): Transport {
  return (listen ?? policy.http.listen) === null ? "stdio" : "http";
}

/**
 * The executor's launcher paths for `policy`. Building the executor runs its
 * startup probes once; it is shut down before returning.
 *
 * @returns The paths, or the executor's one-sentence startup failure.
 */
export async function launcherPathsFor(
  policy: Policy,
): Promise<{ ok: true; paths: readonly string[] } | { ok: false; message: string }> {
  const built = await createExecutor(policy);
  if (!built.ok) return { ok: false, message: built.message };
  try {
    return { ok: true, paths: Object.freeze([...built.executor.launcherPaths()]) };
  } finally {
    await built.executor.shutdown();
  }
}

/**
 * Builds the permission set for `policy` as `serve` would run it.
 *
 * @param policy The loaded policy.
 * @param options The transport (default: what `serve` would pick) and an optional `--http` value.
 * @returns The set, or a refusal / executor failure as one sentence.
 */
export async function buildPermissionSet(
  policy: Policy,
  options: { readonly transport?: Transport; readonly listen?: string | null } = {},
): Promise<PermissionSetResult | { ok: false; code: "EXECUTOR_UNAVAILABLE"; reason: string }> {
  const launchers = await launcherPathsFor(policy);
  if (!launchers.ok) return { ok: false, code: "EXECUTOR_UNAVAILABLE", reason: launchers.message };
  const transport = options.transport ?? transportFor(policy, options.listen);
  return permissionSetFor(policy, {
    transport,
    launcherPaths: launchers.paths,
    ...(options.listen === undefined ? {} : { listen: options.listen }),
  });
}
