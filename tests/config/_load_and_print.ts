/**
 * Child-process helper for the narrow-grant test: loads `Deno.args[0]` with
 * `PATH = Deno.args[1]` and prints the resolved allowlist (or the refusal) as
 * JSON. Run it under explicit, narrow permissions.
 */
import { loadPolicy } from "../../src/config/mod.ts";

const [policyFile, path] = Deno.args;
const loaded = await loadPolicy({ policyFile: policyFile ?? null, env: { PATH: path } });
console.log(JSON.stringify(
  loaded.ok
    ? {
      ok: true,
      allowlist: [...loaded.policy.allowlist.values()],
      auditLog: loaded.policy.auditLog,
      stateDir: loaded.policy.stateDir,
    }
    : loaded,
));
