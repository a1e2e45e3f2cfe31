/**
 * `htmcp systemd --policy FILE [--http HOST:PORT] [--user] [--user-name NAME]
 * [--env-file FILE]`: prints a hardened systemd unit that runs this very
 * program (the pinned binary, or `deno run` with the generated flags on this
 * module) as an HTTP server under the policy's permission set.
 *
 * The address is `--http`, else the policy's `[http] listen`, else
 * `127.0.0.1:8080`. `--transport stdio` is refused with the reason: a stdio
 * server needs its client on stdin, which a service does not have.
 *
 * @module
 */
import { dirname, fromFileUrl, join } from "../path/mod.ts";
import { parseArgs, VERB_FLAGS } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import {
  buildPermissionSet,
  defaultEnvironmentFile,
  isPlainUnitPath,
  renderSystemdUnit,
  type UnitProgram,
} from "../permissions/mod.ts";

function envOrNull(name: string): string | null {
  try {
    return Deno.env.get(name) ?? null;
  } catch {
    // Outside the granted env set: unknown to us.
    return null;
  }
}

/**
 * The checkout's `deno.json` when `module` is this repository's
 * `src/main.ts` (it needs the import map); null for a bundle, which needs
 * none. Not checked on disk: under the policy's permission set the server may
 * not read its own checkout (module loading is not a file read).
 */
function configBeside(module: string): string | null {
  if (!module.endsWith("/src/main.ts")) return null;
  return join(dirname(dirname(module)), "deno.json");
}

/** What a unit should start to run this program again, the way it runs now. */
export function currentUnitProgram(): UnitProgram {
  if (Deno.build.standalone) return { kind: "binary", path: Deno.execPath() };
  // `deno run` needs its npm cache; a unit hides home folders, so name it.
  const home = envOrNull("HOME");
  const denoDir = envOrNull("DENO_DIR") ?? (home === null ? null : `${home}/.cache/deno`);
  const module = fromFileUrl(Deno.mainModule);
  return { kind: "deno", denoPath: Deno.execPath(), module, denoDir, config: configBeside(module) };
}

/** Where the unit listens when neither `--http` nor the policy says. */
export const DEFAULT_UNIT_LISTEN = "127.0.0.1:8080";

/** @returns The exit code: 0 printed, 1 policy or set refused, 2 usage. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, VERB_FLAGS.get("systemd") ?? {});
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  if (parsed.args.positionals.length > 0 || parsed.args.rest !== null) {
    console.error("htmcp: systemd takes no positional arguments; see htmcp --help.");
    return 2;
  }
  const transport = parsed.args.values.get("--transport") ?? "http";
  if (transport === "stdio") {
    console.error(
      "htmcp: a systemd unit cannot serve stdio: a stdio server talks to the one client that " +
        "started it on stdin/stdout, and under systemd nothing is there, so it stops at once " +
        "(stdin closed). Let the MCP client start `htmcp serve` itself, or run this unit over " +
        "HTTP (the default).",
    );
    return 2;
  }
  if (transport !== "http") {
    console.error(`htmcp: --transport must be http for a unit (got "${transport}").`);
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
  const listen = parsed.args.values.get("--http") ?? policy.http.listen ?? DEFAULT_UNIT_LISTEN;
  const built = await buildPermissionSet(policy, { listen });
  if (!built.ok) {
    console.error(`htmcp: ${built.reason}`);
    return 1;
  }
  const user = parsed.args.switches.has("--user");
  const serviceUser = parsed.args.values.get("--user-name");
  if (serviceUser !== undefined && !/^[a-z_][a-z0-9_-]{0,31}$/.test(serviceUser)) {
    console.error(`htmcp: --user-name "${serviceUser}" is not a valid account name.`);
    return 2;
  }
  const needsPin = policy.auth.mode === "oauth";
  const envFile = parsed.args.values.get("--env-file");
  if (envFile !== undefined && !isPlainUnitPath(envFile)) {
    console.error(
      `htmcp: --env-file "${envFile}" must be an absolute path without blanks, quotes or backslashes.`,
    );
    return 2;
  }
  console.log(renderSystemdUnit(built.set, policy, {
    program: currentUnitProgram(),
    user,
    listen,
    ...(serviceUser === undefined ? {} : { serviceUser }),
    environmentFile: needsPin ? envFile ?? defaultEnvironmentFile(user) : null,
  }));
  return 0;
}
