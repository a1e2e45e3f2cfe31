/**
 * `htmcp audit key [--policy FILE]`: prints the public half of the key that
 * signs audit checkpoints, as one JSON line (a JWK with its fingerprint as
 * `kid`), creating the key pair in the policy's state dir on first use. Run
 * it as the server's user, and keep its output where the server cannot write:
 * `htmcp audit verify --key` takes that file.
 *
 * @module
 */
import { loadOrCreateCheckpointKey } from "../audit/mod.ts";
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";

/**
 * @param args the arguments after `audit key`
 * @returns 0 when printed, 1 when the key cannot be read or made, 2 on usage
 */
export async function runKey(args: readonly string[]): Promise<number> {
  const parsed = parseArgs(args, { values: ["--policy"] });
  if (!parsed.ok || parsed.args.positionals.length > 0) {
    console.error("Usage: htmcp audit key [--policy FILE]");
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 2;
  if (policy.stateDir === null) {
    console.error(
      'htmcp: the policy sets no "state_dir", so there is no checkpoint signing key (checkpoints are off).',
    );
    return 1;
  }
  const loaded = await loadOrCreateCheckpointKey(policy.stateDir);
  if (!loaded.ok) {
    console.error(`htmcp: ${loaded.message}`);
    return 1;
  }
  if (loaded.created) {
    console.error(`htmcp: created the audit signing key in "${policy.stateDir}".`);
  }
  console.log(JSON.stringify(loaded.key.publicJwk));
  return 0;
}
