/**
 * The benchmarks' server: a policy for a bench folder, and the server
 * exactly as `deno task htmcp serve` runs it (minus the launcher process).
 * A module of its own so a section run alone does not import `main.ts`.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { planLaunch } from "../scripts/launch.ts";
import { prepareJail } from "../scripts/_jail.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

function denoDir(): string {
  return Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
}

export async function writePolicy(
  dir: string,
  sandbox: "none" | "bwrap",
  commands: readonly string[] = ["true"],
  maxConcurrent?: number,
): Promise<string> {
  await Deno.mkdir(`${dir}/jail`, { recursive: true });
  // Commands run as the jail's owner, never root; bwrap must reach it.
  await prepareJail(`${dir}/jail`);
  const name = `${sandbox}-${commands.join("-")}${
    maxConcurrent === undefined ? "" : `-${maxConcurrent}`
  }`;
  const path = `${dir}/policy-${name}.toml`;
  await Deno.writeTextFile(
    path,
    `jail_root = "jail"\naudit_log = "audit-${name}.jsonl"\n[allowlist]\ncommands = ${
      JSON.stringify(commands)
    }\n` +
      (maxConcurrent === undefined ? "" : `[limits]\nmax_concurrent = ${maxConcurrent}\n`) +
      `[sandbox]\nmode = "${sandbox}"\n` +
      (sandbox === "none" ? "accept_path_check_only = true\n" : ""),
  );
  return path;
}

/** The server exactly as `deno task htmcp serve` runs it, minus the launcher process. */
export async function serverUnderFlags(policy: string) {
  const plan = await planLaunch(["serve", "--policy", policy], REPO);
  if (!plan.ok) throw new Error(plan.message);
  return {
    command: Deno.execPath(),
    args: [...plan.argv],
    env: { PATH: "/usr/bin:/bin", HOME: "/tmp", DENO_DIR: denoDir() },
  };
}
