/**
 * Loads the policy named by `--policy` (or `HTMCP_POLICY_FILE`) for a CLI verb,
 * printing the loader's one-sentence failure to stderr.
 *
 * @module
 */
import { type LoadOverrides, loadPolicy } from "../config/mod.ts";
import type { Policy } from "../config/types.ts";
import { missingPolicyMessage } from "./args.ts";
import { processEnv } from "./env.ts";

/**
 * @param policyFlag The `--policy` value, if given.
 * @param overrides CLI values that take part in validation (e.g. `--http`).
 * @returns The policy, or null after printing why it could not be loaded.
 */
export async function loadPolicyForCli(
  policyFlag: string | undefined,
  overrides: LoadOverrides = {},
): Promise<Policy | null> {
  const env = processEnv();
  const missing = missingPolicyMessage(policyFlag, env);
  if (missing !== null) {
    console.error(`htmcp: ${missing}`);
    return null;
  }
  const result = await loadPolicy({ policyFile: policyFlag ?? null, env, overrides });
  if (!result.ok) {
    console.error(`htmcp: ${result.message}`);
    return null;
  }
  return result.policy;
}
