/**
 * Two checkouts' servers side by side, calls interleaved: this tree's server
 * and another tree's (an earlier commit in a `git worktree`), each started
 * exactly as `deno task htmcp serve` starts it from its own tree, receive
 * `run_command(COMMAND)` in turns (default `true`; the jail holds
 * `src/lib/util/mod.ts`, for a command with path arguments such as
 * `"true src/lib/util/mod.ts"`): one call to each, sequentially, then a
 * burst of calls eight in flight to each. Interleaving at that grain takes
 * the machine's drift (other processes, the disk) out of the ratio, which
 * whole runs one after the other on a shared machine cannot.
 *
 * Usage: deno run -A bench/ab_trees.ts OTHER_TREE [none|bwrap] [ROUNDS] [COMMAND]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { percentiles } from "./stdio_roundtrip.ts";
import { burst, type MultiplexedServer, startMultiplexed } from "./_multiplexed_client.ts";

const HERE = fileURLToPath(new URL("..", import.meta.url));
const SEQUENTIAL_PER_ROUND = 20;
const BURST = 80;
const IN_FLIGHT = 8;

/** This tree's or another's server, started as its own `deno task htmcp serve` would. */
async function start(tree: string, policy: string): Promise<MultiplexedServer> {
  const { planLaunch } = await import(`${tree}/scripts/launch.ts`);
  const plan = await planLaunch(["serve", "--policy", policy], tree);
  if (!plan.ok) throw new Error(plan.message);
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
  return await startMultiplexed({
    command: Deno.execPath(),
    args: [...plan.argv],
    env: { PATH: "/usr/bin:/bin", HOME: "/tmp", DENO_DIR: denoDir },
  });
}

/**
 * The tree's policy. `accept_path_check_only` (required with mode none
 * since it exists) is written only for a tree whose loader knows the key:
 * an older tree refuses unknown keys, and needed no acknowledgement then.
 */
async function writePolicy(
  dir: string,
  name: string,
  mode: string,
  tree: string,
): Promise<string> {
  const schema = await Deno.readTextFile(`${tree}/src/config/schema.ts`).catch(() => "");
  const acknowledge = mode === "none" && schema.includes("accept_path_check_only");
  const { prepareJail } = await import(`${HERE}/scripts/_jail.ts`);
  await Deno.mkdir(`${dir}/jail`, { recursive: true });
  await Deno.mkdir(`${dir}/jail/src/lib/util`, { recursive: true });
  await Deno.writeTextFile(`${dir}/jail/src/lib/util/mod.ts`, "export {};\n");
  await prepareJail(`${dir}/jail`);
  const path = `${dir}/${name}.toml`;
  await Deno.writeTextFile(
    path,
    `jail_root = "jail"\naudit_log = "audit-${name}.jsonl"\n[allowlist]\ncommands = ["true"]\n` +
      `[limits]\nmax_concurrent = ${IN_FLIGHT}\n[sandbox]\nmode = "${mode}"\n` +
      (acknowledge ? "accept_path_check_only = true\n" : ""),
  );
  return path;
}

if (import.meta.main) {
  const other = Deno.args[0];
  const mode = Deno.args[1] ?? "none";
  const rounds = Number(Deno.args[2] ?? 10);
  const command = Deno.args[3] ?? "true";
  if (other === undefined) throw new Error("usage: ab_trees.ts OTHER_TREE [none|bwrap] [ROUNDS]");
  const dir = await Deno.makeTempDir({ prefix: "htmcp-ab-" });
  await Deno.chmod(dir, 0o755); // the sandbox user must reach the jail below it
  const trees = [{ name: "this", tree: HERE }, { name: "other", tree: other }];
  const servers = await Promise.all(
    trees.map(async ({ name, tree }) => start(tree, await writePolicy(dir, name, mode, tree))),
  );
  try {
    const sequential: number[][] = [[], []];
    const rates: number[][] = [[], []];
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < SEQUENTIAL_PER_ROUND; i++) {
        for (const [k, server] of servers.entries()) {
          const t0 = performance.now();
          await server.call(command);
          sequential[k]!.push(performance.now() - t0);
        }
      }
      // Alternate which goes first, so neither always follows the other's burst.
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order) rates[k]!.push(await burst(servers[k]!, BURST, IN_FLIGHT, command));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `mode ${mode}, ${rounds} rounds, run_command(${JSON.stringify(command)}), load ${
        Deno.loadavg()[0]!.toFixed(2)
      }`,
    );
    for (const [k, { name, tree }] of trees.entries()) {
      const p = percentiles(sequential[k]!);
      console.log(
        `  ${name.padEnd(5)} p50 ${p.p50.toFixed(2)} ms, p95 ${p.p95.toFixed(2)} ms; ` +
          `${IN_FLIGHT} in flight median ${median(rates[k]!).toFixed(0)} calls/s  (${tree})`,
      );
    }
    console.log(
      `  ratio this/other: p50 x${
        (percentiles(sequential[0]!).p50 / percentiles(sequential[1]!).p50).toFixed(2)
      }, in flight x${(median(rates[0]!) / median(rates[1]!)).toFixed(2)}`,
    );
  } finally {
    await Promise.all(servers.map((server) => server.close()));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
