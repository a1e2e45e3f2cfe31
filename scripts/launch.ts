/**
 * `deno task htmcp ARGS`: runs `src/main.ts ARGS` under exactly the Deno
 * permission set generated from the policy, never `-A`.
 *
 * The launcher itself needs broad permissions (it reads a policy that may be
 * anywhere and resolves its commands), so it does only that: load the policy,
 * build the set, spawn `deno run <flags> src/main.ts ARGS` with stdio
 * inherited (the MCP stream passes straight through: no bridge, no per-call
 * cost), forward termination signals, and exit with the child's status.
 *
 * Per verb: `serve` (the default), `explain`, `check`, `permissions`,
 * `systemd` and `auth` run under the policy's set; `audit verify FILE` may
 * read FILE only; `version` and `--help` get no permission at all.
 *
 * @module
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPolicy } from "../src/config/mod.ts";
import { processEnv } from "../src/cli/env.ts";
import { ensureLauncherBuilt } from "./build_launcher.ts";
import {
  buildPermissionSet,
  DEFAULT_IMPORT_HOSTS,
  renderDenoFlags,
} from "../src/permissions/mod.ts";

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../deno.json", import.meta.url));
const POLICY_VERBS = new Set(["serve", "explain", "check", "permissions", "systemd", "auth"]);

/** Flags for a verb that touches nothing: deny the implicit remote imports too. */
const NOTHING = Object.freeze([
  "--no-prompt",
  "--deny-net",
  "--deny-sys",
  "--deny-ffi",
  `--deny-import=${DEFAULT_IMPORT_HOSTS.join(",")}`,
]);

export type LaunchPlan =
  | { readonly ok: true; readonly argv: readonly string[] }
  | { readonly ok: false; readonly message: string };

/** The value of `--name VALUE` or `--name=VALUE` before any bare `--`. */
function flagValue(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") return undefined;
    if (arg === name) return args[i + 1];
    if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
  }
  return undefined;
}

/**
 * Decides the exact `deno` argv for `args` (without spawning anything).
 *
 * @param args The htmcp arguments, as given to `deno task htmcp`.
 * @param cwd The folder relative paths resolve against.
 * @returns The argv (after the deno executable), or why it cannot run.
 */
export async function planLaunch(args: readonly string[], cwd: string): Promise<LaunchPlan> {
  const first = args[0];
  const verb = first === undefined || first.startsWith("-") ? "serve" : first;
  const tail = ["--config", CONFIG, MAIN, ...args];
  if (first === "--help" || first === "-h" || first === "help" || !POLICY_VERBS.has(verb)) {
    if (verb === "audit" && args[1] === "verify" && args[2] !== undefined) {
      const file = resolve(cwd, args[2]);
      return { ok: true, argv: ["run", ...NOTHING, `--allow-read=${file}`, ...tail] };
    }
    return { ok: true, argv: ["run", ...NOTHING, ...tail] };
  }
  const policyFlag = flagValue(args, "--policy");
  const loaded = await loadPolicy({
    policyFile: policyFlag === undefined ? null : resolve(cwd, policyFlag),
    env: processEnv(),
  });
  if (!loaded.ok) return { ok: false, message: loaded.message };
  const listen = flagValue(args, "--http");
  const built = await buildPermissionSet(loaded.policy, listen === undefined ? {} : { listen });
  if (!built.ok) return { ok: false, message: built.reason };
  return { ok: true, argv: ["run", ...renderDenoFlags(built.set), ...tail] };
}

const FORWARDED: readonly Deno.Signal[] = ["SIGTERM", "SIGINT", "SIGHUP"];
const SIGNAL_NUMBERS: ReadonlyMap<string, number> = new Map([
  ["SIGHUP", 1],
  ["SIGINT", 2],
  ["SIGKILL", 9],
  ["SIGTERM", 15],
]);

if (import.meta.main) {
  // `deno task` runs in the folder of deno.json; INIT_CWD is where the
  // operator typed the command, which their relative paths mean.
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  // The server refuses to start without the launcher helper built from this
  // checkout's source: build it first when missing or stale (nothing goes to
  // stdout, which is the MCP stream).
  const launcher = await ensureLauncherBuilt();
  if (launcher !== null) {
    console.error(`htmcp: ${launcher}`);
    Deno.exit(1);
  }
  const plan = await planLaunch(Deno.args, cwd);
  if (!plan.ok) {
    console.error(`htmcp: ${plan.message}`);
    Deno.exit(1);
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: [...plan.argv],
    cwd,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  // A client that stops the server signals our pid, not the child's.
  const forwarders = FORWARDED.map((signal) => {
    const forward = () => {
      try {
        child.kill(signal);
      } catch {
        // already exited
      }
    };
    Deno.addSignalListener(signal, forward);
    return [signal, forward] as const;
  });
  const status = await child.status;
  for (const [signal, forward] of forwarders) Deno.removeSignalListener(signal, forward);
  Deno.exit(status.signal === null ? status.code : 128 + (SIGNAL_NUMBERS.get(status.signal) ?? 0));
}
