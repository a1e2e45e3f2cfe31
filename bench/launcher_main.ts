/**
 * `deno run -A bench/launcher_main.ts`: only the launcher section of
 * `deno task bench` (round trip, eight in flight, 50 MB output), for a quick
 * before/after comparison on one machine.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { planLaunch } from "../scripts/launch.ts";
import { measureLauncher } from "./launcher_bench.ts";
import { prepareJail } from "../scripts/_jail.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CALLS = Number(Deno.env.get("HTMCP_BENCH_CALLS") ?? 200);
const fmt = (n: number) => n.toFixed(2);

/** A policy allowing `true` and `seq` in `mode`, up to eight calls at once. */
export async function launcherPolicy(dir: string, mode: "none" | "bwrap"): Promise<string> {
  await Deno.mkdir(`${dir}/jail`, { recursive: true });
  // Commands run as the jail's owner, never root: hand the jail to it.
  await prepareJail(`${dir}/jail`);
  const path = `${dir}/launcher-${mode}.toml`;
  await Deno.writeTextFile(
    path,
    `jail_root = "jail"\naudit_log = "audit-launcher-${mode}.jsonl"\n` +
      `[allowlist]\ncommands = ["true", "seq"]\n[limits]\nmax_concurrent = 8\n` +
      `[sandbox]\nmode = "${mode}"\n` +
      // Mode none measures the launcher without the kernel sandbox; it must say so.
      (mode === "none" ? "accept_path_check_only = true\n" : ""),
  );
  return path;
}

/** Prints the launcher section's rows. */
export async function printLauncherSection(dir: string, calls = CALLS): Promise<void> {
  console.log(
    "   mode   server p50/p95   floor p50/p95   over floor p50   8 in flight   peak RSS: 1.2 MB / +50 MB output, 50 MB time",
  );
  for (const mode of ["none", "bwrap"] as const) {
    const policy = await launcherPolicy(dir, mode);
    const plan = await planLaunch(["serve", "--policy", policy], REPO);
    if (!plan.ok) throw new Error(plan.message);
    const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
    const f = await measureLauncher(
      {
        command: Deno.execPath(),
        args: [...plan.argv],
        env: { PATH: "/usr/bin:/bin", HOME: "/tmp", DENO_DIR: denoDir },
      },
      mode,
      `${dir}/jail`,
      calls,
    );
    console.log(
      `   ${mode.padEnd(6)} ${fmt(f.server.p50)}/${fmt(f.server.p95)} ms   ${fmt(f.floor.p50)}/${
        fmt(f.floor.p95)
      } ms   +${fmt(f.server.p50 - f.floor.p50)} ms        ${
        f.inflightCallsPerSecond.toFixed(0)
      } calls/s   +${fmt(f.capPeakMiB)} / +${fmt(f.floodPeakMiB)} MiB, ${f.floodMs.toFixed(0)} ms`,
    );
  }
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-launcher-" });
  await Deno.chmod(dir, 0o755);
  try {
    await printLauncherSection(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
