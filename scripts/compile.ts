/**
 * `deno task compile`: builds the single binary.
 *
 * - Pinned (default): `--policy FILE` is required. The binary carries the
 *   Deno permission flags generated from that policy, and the policy path
 *   (as `HTMCP_POLICY_FILE`, embedded with `--env-file`: an explicit
 *   `--policy` or environment value still wins, and then fails closed with
 *   `NotCapable` unless it is the same file). It reports layer `pinned`.
 * - Broad (`--broad`, for release binaries built once for everyone): no
 *   operator paths can be baked in, so it is compiled with all permissions
 *   plus `--unstable-worker-options`, and `serve`/`check` confine themselves
 *   in a Worker to the policy's set at start (layer `self-confined`).
 *
 * `deno compile` downloads its runtime (`denort`) on first use; where that
 * is impossible this script says so in one sentence (and how to proceed)
 * instead of Deno's network trace. `--dry-run` prints the exact argv.
 *
 * Usage: compile.ts (--policy FILE | --broad) [--target TRIPLE] [--output PATH] [--dry-run]
 *
 * @module
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPolicy } from "../src/config/mod.ts";
import { processEnv } from "../src/cli/env.ts";
import { parseArgs } from "../src/cli/args.ts";
import { buildPermissionSet, renderDenoFlags, shellLine } from "../src/permissions/mod.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MAIN = resolve(ROOT, "src/main.ts");
const CONFIG = resolve(ROOT, "deno.json");

/** Targets `deno compile` accepts on 2.9. */
export const TARGETS: ReadonlySet<string> = new Set([
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
]);

export interface CompilePlan {
  /** argv after the deno executable. */
  readonly argv: readonly string[];
  /** Content of the env file to embed (pinned only). */
  readonly envFile: string | null;
  readonly output: string;
}

/**
 * Decides the `deno compile` argv.
 *
 * @param args Script arguments.
 * @param cwd Folder relative paths resolve against.
 * @param envFilePath Where the embedded env file will be written.
 * @returns The plan, or one sentence saying what is wrong.
 */
export async function planCompile(
  args: readonly string[],
  cwd: string,
  envFilePath: string,
): Promise<{ ok: true; plan: CompilePlan } | { ok: false; message: string }> {
  const parsed = parseArgs(args, {
    values: ["--policy", "--target", "--output", "--http"],
    switches: ["--broad", "--dry-run"],
  });
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const { values, switches } = parsed.args;
  const target = values.get("--target");
  if (target !== undefined && !TARGETS.has(target)) {
    return {
      ok: false,
      message: `--target is "${target}", but it must be one of ${[...TARGETS].join(", ")}.`,
    };
  }
  const output = resolve(cwd, values.get("--output") ?? "dist/htmcp");
  const common = [
    "compile",
    "--config",
    CONFIG,
    "--frozen",
    // Type-checking is CI's job (`deno check`); the binary is the same either way.
    "--no-check",
    "--output",
    output,
    ...(target === undefined ? [] : ["--target", target]),
    // The confined Worker re-enters the main module; make sure it is embedded.
    "--include",
    MAIN,
  ];
  if (switches.has("--broad")) {
    if (values.has("--policy")) {
      return { ok: false, message: "--broad builds a binary for every policy; drop --policy." };
    }
    return {
      ok: true,
      plan: {
        argv: [...common, "--allow-all", "--unstable-worker-options", MAIN],
        envFile: null,
        output,
      },
    };
  }
  const policyFlag = values.get("--policy");
  if (policyFlag === undefined) {
    return {
      ok: false,
      message: "Give --policy FILE (a pinned binary) or --broad (a release binary).",
    };
  }
  const policyFile = resolve(cwd, policyFlag);
  const loaded = await loadPolicy({ policyFile, env: processEnv() });
  if (!loaded.ok) return { ok: false, message: loaded.message };
  const listen = values.get("--http");
  const built = await buildPermissionSet(loaded.policy, listen === undefined ? {} : { listen });
  if (!built.ok) return { ok: false, message: built.reason };
  return {
    ok: true,
    plan: {
      argv: [...common, `--env-file=${envFilePath}`, ...renderDenoFlags(built.set), MAIN],
      envFile: `HTMCP_POLICY_FILE=${policyFile}\n`,
      output,
    },
  };
}

/** Turns Deno's runtime-download failure into one actionable sentence. */
export function explainCompileFailure(stderr: string): string | null {
  if (
    /denort|Setting up base binary/i.test(stderr) &&
    /error sending request|dns|connect/i.test(stderr)
  ) {
    return "deno compile could not download its runtime (denort) from dl.deno.land, so no binary was written. " +
      "Build where that host is reachable (the release workflow does), or point DENORT_BIN at a local denort binary; " +
      "`deno task bundle` makes dist/htmcp.js, which runs offline under the same flags.";
  }
  return null;
}

if (import.meta.main) {
  const dryRun = Deno.args.includes("--dry-run");
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  const envFilePath = resolve(ROOT, "dist/.htmcp-compile.env");
  const planned = await planCompile(Deno.args, cwd, envFilePath);
  if (!planned.ok) {
    console.error(`compile: ${planned.message}`);
    Deno.exit(2);
  }
  const { plan } = planned;
  if (dryRun) {
    console.log(shellLine([Deno.execPath(), ...plan.argv]));
    if (plan.envFile !== null) console.log(`# ${envFilePath}: ${plan.envFile.trim()}`);
    Deno.exit(0);
  }
  await Deno.mkdir(resolve(ROOT, "dist"), { recursive: true });
  if (plan.envFile !== null) await Deno.writeTextFile(envFilePath, plan.envFile, { mode: 0o600 });
  const result = await new Deno.Command(Deno.execPath(), {
    args: [...plan.argv],
    stdout: "inherit",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(result.stderr);
  if (!result.success) {
    const explained = explainCompileFailure(stderr);
    console.error(explained === null ? stderr : `compile: ${explained}`);
    Deno.exit(1);
  }
  await Deno.stderr.write(result.stderr);
  console.error(`compile: wrote ${plan.output}`);
}
