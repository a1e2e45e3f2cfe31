/**
 * `htmcp systemd --policy FILE [--user] [--http HOST:PORT]`: prints a
 * hardened systemd unit that runs this very program (the pinned binary, or
 * `deno run` with the generated flags on this module) under the policy's
 * permission set.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { buildPermissionSet, renderSystemdUnit, type UnitProgram } from "../permissions/mod.ts";

function envOrNull(name: string): string | null {
  try {
    return Deno.env.get(name) ?? null;
  } catch {
    // Outside the granted env set: unknown to us.
    return null;
  }
}

/** What a unit should start to run this program again, the way it runs now. */
export function currentUnitProgram(): UnitProgram {
  if (Deno.build.standalone) return { kind: "binary", path: Deno.execPath() };
  // `deno run` needs its npm cache; a unit hides home folders, so name it.
  const home = envOrNull("HOME");
  const denoDir = envOrNull("DENO_DIR") ?? (home === null ? null : `${home}/.cache/deno`);
  return {
    kind: "deno",
    denoPath: Deno.execPath(),
    module: fileURLToPath(Deno.mainModule),
    denoDir,
  };
}

/** @returns The exit code: 0 printed, 1 policy or set refused, 2 usage. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, { values: ["--policy", "--http"], switches: ["--user"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  if (parsed.args.positionals.length > 0 || parsed.args.rest !== null) {
    console.error("htmcp: systemd takes no positional arguments; see htmcp --help.");
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 1;
  if (policy.policyFile === null) {
    console.error(
      "htmcp: a systemd unit needs a policy file (--policy FILE), read at every start.",
    );
    return 1;
  }
  const listen = parsed.args.values.get("--http");
  const built = await buildPermissionSet(policy, listen === undefined ? {} : { listen });
  if (!built.ok) {
    console.error(`htmcp: ${built.reason}`);
    return 1;
  }
  console.log(renderSystemdUnit(built.set, policy, {
    program: currentUnitProgram(),
    user: parsed.args.switches.has("--user"),
    serveArgs: listen === undefined ? [] : ["--http", listen],
  }));
  return 0;
}
