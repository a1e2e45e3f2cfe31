/**
 * Cold start to the first `initialize` response through the real SDK client,
 * and the resident memory of what stays running, for the ways of starting
 * the stdio server with the same policy:
 *
 * - `deno task htmcp serve` (the README's development form: deno's task
 *   runner, the launcher, the server: three Deno processes, and the
 *   server's serving helper, counted with them);
 * - the installed `htmcp` command (`deno task install` into a temporary
 *   prefix): its script reuses the launcher's kept start (the start cache,
 *   written by the warm-up start) and execs the server (one Deno process and
 *   its serving helper remain);
 * - the same with its start cache unusable: its launcher computes the flags
 *   and exits at every start, then the script execs the server;
 * - that installed server alone, started with the argv its launcher printed
 *   (the launcher's share is the difference);
 * - the server directly under its generated flags;
 * - the bundle (`deno task bundle`, dist/htmcp.js) under the same flags,
 *   when it has been built;
 * - the floor: `deno run` of a program that only answers `initialize`.
 *
 * The forms are started interleaved, one of each per round, and each start
 * is also read against the floor's of its round (\`x floor\`): on a shared
 * machine whose speed drifts, that ratio is the figure to compare across
 * runs and machines. RSS is the sum over the started process and its
 * descendants, read from /proc after a short idle pause in the last round.
 * Run: deno run -A bench/cold_start.ts [runs]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { install } from "../scripts/install.ts";
import { connect, percentiles, rssMiB, type ServerLaunch } from "./stdio_roundtrip.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** Figures of one start form. */
export interface ColdStart {
  readonly form: string;
  readonly p50Ms: number;
  readonly minMs: number;
  /** The median over rounds of this form's start over the floor's in the same round. */
  readonly floorRatio: number;
  /** RSS of every process of the form once idle, in MiB. */
  readonly idleRssMiB: number;
  readonly processes: number;
}

async function descendants(pid: number): Promise<number[]> {
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    const children = await Deno.readTextFile(
      `/proc/${found[i]}/task/${found[i]}/children`,
    ).catch(() => "");
    for (const child of children.trim().split(/\s+/).filter(Boolean)) found.push(Number(child));
  }
  return found;
}

/** One start of `launch` to its `initialize` answer, and, when `rss`, the RSS once idle. */
async function startOnce(
  launch: ServerLaunch,
  rss: boolean,
): Promise<{ ms: number; idleRssMiB: number; processes: number }> {
  const { client, coldStartMs, pid } = await connect(launch);
  let idleRssMiB = NaN;
  let processes = 0;
  if (rss && pid !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const pids = await descendants(pid);
    processes = pids.length;
    let total = 0;
    for (const one of pids) total += await rssMiB(one).catch(() => 0);
    idleRssMiB = total;
  }
  await client.close();
  return { ms: coldStartMs, idleRssMiB, processes };
}

/**
 * The installed command's server without its launcher: the start the
 * launcher prints (`HTMCP_LAUNCH_EXEC=1`), read back through `sh`, so the
 * launcher's own share of the installed start is the difference.
 */
async function installedServer(
  libDir: string,
  policy: string,
  env: Record<string, string>,
): Promise<ServerLaunch> {
  const launcher = `${libDir}/dist/scripts/launch.js`;
  const planned = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-config", "--allow-all", launcher, "serve", "--policy", policy],
    env: { ...env, HTMCP_LAUNCH_EXEC: "1" },
    stdout: "piped",
  }).output();
  if (!planned.success) throw new Error("the installed launcher printed no start");
  const argv = await new Deno.Command("/bin/sh", {
    args: ["-c", `${new TextDecoder().decode(planned.stdout)}\nprintf '%s\\0' "$@"`],
    stdout: "piped",
  }).output();
  const args = new TextDecoder().decode(argv.stdout).split("\0").slice(0, -1);
  return { command: Deno.execPath(), args, env };
}

/**
 * Measures the forms, interleaved run by run is not possible with one
 * client each, so each form gets `runs` starts after one warm-up start.
 *
 * @param runs Starts per form.
 * @returns One row per form.
 */
export async function measureColdStart(runs = 5): Promise<ColdStart[]> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-cold-" });
  await Deno.chmod(dir, 0o755);
  try {
    const policy = await writePolicy(dir, "none");
    const direct = await serverUnderFlags(policy);
    const env = direct.env;
    const installed = await install(`${dir}/prefix`);
    // A second installation whose start cache cannot be used (its folder's
    // place is taken by a file): its launcher runs at every start.
    const uncached = await install(`${dir}/prefix-uncached`);
    await Deno.writeTextFile(`${uncached.libDir}/start`, "");
    const forms: [string, ServerLaunch][] = [
      ["deno task htmcp serve", {
        command: Deno.execPath(),
        args: ["task", "--quiet", "--cwd", REPO, "htmcp", "serve", "--policy", policy],
        env,
      }],
      ["installed htmcp command", {
        command: installed.command,
        args: ["serve", "--policy", policy],
        env,
      }],
      ["installed, its launcher at every start", {
        command: uncached.command,
        args: ["serve", "--policy", policy],
        env,
      }],
      ["installed server alone (bundle)", await installedServer(installed.libDir, policy, env)],
      ["server directly under its flags", direct],
    ];
    const bundle = `${REPO}dist/htmcp.js`;
    if (await Deno.stat(bundle).then(() => true, () => false)) {
      // The same flags; the bundle needs no config, and reading it needs no grant.
      const args = [...direct.args];
      const config = args.indexOf("--config");
      if (config !== -1) args.splice(config, 2, "--no-config");
      const main = args.findIndex((arg) => arg.endsWith("/src/main.ts"));
      if (main !== -1) {
        args[main] = bundle;
        forms.push(["bundle (dist/htmcp.js) under its flags", { ...direct, args }]);
      }
    }
    forms.push(["floor: deno answering initialize only", {
      command: Deno.execPath(),
      args: ["run", "--quiet", "--no-config", `${REPO}bench/_initialize_floor.ts`],
      env,
    }]);
    // Interleaved, a start of each form per round, so a machine that slows
    // down or speeds up (a shared VM does) weighs on every form alike, and
    // each form's time is also read against the floor's in the same round.
    // Every form runs under its own V8 flag set throughout, so no start
    // throws away another's code cache.
    for (const [, launch] of forms) await startOnce(launch, false); // warm-up: caches
    const times = forms.map(() => [] as number[]);
    const last = forms.map(() => ({ idleRssMiB: NaN, processes: 0 }));
    for (let round = 0; round < runs; round++) {
      for (const [i, [, launch]] of forms.entries()) {
        const one = await startOnce(launch, round === runs - 1);
        times[i]!.push(one.ms);
        if (round === runs - 1) last[i] = one;
      }
    }
    const floor = times.at(-1)!;
    return forms.map(([form], i) => ({
      form,
      p50Ms: percentiles(times[i]!).p50,
      minMs: Math.min(...times[i]!),
      floorRatio: percentiles(times[i]!.map((ms, round) => ms / floor[round]!)).p50,
      idleRssMiB: last[i]!.idleRssMiB,
      processes: last[i]!.processes,
    }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const runs = Number(Deno.args[0] ?? 5);
  console.log(
    "form                                      p50 ms   min ms   x floor   processes   idle RSS (all)",
  );
  for (const row of await measureColdStart(runs)) {
    console.log(
      `${row.form.padEnd(40)} ${row.p50Ms.toFixed(0).padStart(6)} ${
        row.minMs.toFixed(0).padStart(8)
      } ${row.floorRatio.toFixed(2).padStart(9)} ${String(row.processes).padStart(11)}   ${
        row.idleRssMiB.toFixed(1)
      } MiB`,
    );
  }
}
