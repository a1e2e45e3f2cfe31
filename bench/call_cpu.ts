/**
 * Where the CPU of a call goes with calls in flight: calls per second are
 * bounded by CPU once several are in flight (two cores here), so this splits
 * each `run_command("true")` call's CPU time between the server process
 * itself and the processes below it: the serving helper (alive, so its own
 * time and its reaped children's are read from its /proc entry) and every
 * call's fork of it, the namespace's init and the command (each waited for,
 * so their time is in the helper's `cutime`/`cstime`, and that of anything
 * the server itself reaps in the server's), beside the floor: a Deno process that
 * spawns `/usr/bin/true` the same number of times, as many at once, with
 * piped output (its own CPU is the runtime's spawn and pipe cost, its
 * children's is the bare command).
 *
 * Figures are per call, from /proc (clock ticks of 10 ms summed over many
 * calls, so a run of a few thousand calls resolves to about 0.01 ms).
 *
 * Run: deno run -A bench/call_cpu.ts [CALLS] [IN_FLIGHT]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { burst, startMultiplexed } from "./_multiplexed_client.ts";

/** CPU milliseconds per call, split by who spent them. */
export interface CallCpu {
  readonly label: string;
  readonly callsPerSecond: number;
  readonly selfUserMs: number;
  readonly selfSysMs: number;
  readonly childrenUserMs: number;
  readonly childrenSysMs: number;
}

/** utime, stime, cutime, cstime of `pid` in milliseconds (USER_HZ 100). */
async function cpuTimes(pid: number | "self"): Promise<number[]> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces) start at the state, field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [11, 12, 13, 14].map((index) => Number(fields[index]) * 10);
}

/** The server's serving helper (`htmcp-spawn --serve`), a live child of it. */
async function servingHelperOf(pid: number): Promise<number> {
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    const children = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/children`);
    for (const child of children.trim().split(" ").filter(Boolean)) {
      const argv = (await Deno.readTextFile(`/proc/${child}/cmdline`)).split("\0");
      if (argv[1] === "--serve") return Number(child);
    }
  }
  throw new Error(`server ${pid} has no serving helper`);
}

/**
 * The server's own CPU, and everything below it: what it reaped, plus the
 * live serving helper's own time and what that reaped.
 */
async function treeTimes(server: number, helper: number): Promise<number[]> {
  const [user, sys, childUser, childSys] = await cpuTimes(server);
  const [hUser, hSys, hChildUser, hChildSys] = await cpuTimes(helper);
  return [user!, sys!, childUser! + hUser! + hChildUser!, childSys! + hSys! + hChildSys!];
}

function perCall(
  label: string,
  before: number[],
  after: number[],
  calls: number,
  callsPerSecond: number,
): CallCpu {
  const [selfUserMs, selfSysMs, childrenUserMs, childrenSysMs] = after.map((value, index) =>
    (value - before[index]!) / calls
  ) as [number, number, number, number];
  return { label, callsPerSecond, selfUserMs, selfSysMs, childrenUserMs, childrenSysMs };
}

/** The floor, measured in this process: `calls` bare spawns of `true`, `inFlight` at once. */
async function floorHere(calls: number, inFlight: number): Promise<CallCpu> {
  const before = await cpuTimes("self");
  let left = calls;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (left-- > 0) {
      await new Deno.Command("/usr/bin/true", {
        clearEnv: true,
        env: { PATH: "/usr/bin:/bin" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    }
  }));
  const rate = calls / ((performance.now() - t0) / 1000);
  return perCall("bare spawn of true", before, await cpuTimes("self"), calls, rate);
}

/**
 * The floor in a fresh Deno process (so this one's other work is not in it).
 *
 * @throws {Error} When the child fails.
 */
async function floor(calls: number, inFlight: number): Promise<CallCpu> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fileURLToPath(import.meta.url), "--floor", String(calls), String(inFlight)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error("the floor's process failed");
  return JSON.parse(new TextDecoder().decode(output.stdout)) as CallCpu;
}

/** One server (mode `mode`), a warm-up, then `calls` calls `inFlight` at a time. */
async function serverCpu(
  dir: string,
  mode: "none" | "bwrap",
  calls: number,
  inFlight: number,
): Promise<CallCpu> {
  const launch = await serverUnderFlags(await writePolicy(dir, mode, ["true"], inFlight));
  const server = await startMultiplexed(launch);
  try {
    await burst(server, 50, inFlight); // warm-up: JIT, the serving helper's start
    const helper = await servingHelperOf(server.pid);
    const before = await treeTimes(server.pid, helper);
    const rate = await burst(server, calls, inFlight);
    return perCall(`htmcp mode ${mode}`, before, await treeTimes(server.pid, helper), calls, rate);
  } finally {
    await server.close();
  }
}

/**
 * The floor and both modes, one after the other.
 *
 * @param calls Calls per measurement.
 * @param inFlight Calls at once.
 */
export async function measureCallCpu(calls: number, inFlight: number): Promise<CallCpu[]> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-call-cpu-" });
  await Deno.chmod(dir, 0o755); // the sandbox user must reach the jail below it
  try {
    return [
      await floor(calls, inFlight),
      await serverCpu(dir, "none", calls, inFlight),
      await serverCpu(dir, "bwrap", calls, inFlight),
    ];
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Prints the figures as a table. */
export function printCallCpu(rows: readonly CallCpu[], inFlight: number): void {
  console.log(
    `  per call, ${inFlight} in flight: own CPU (user + sys) | processes below it | calls/s`,
  );
  for (const row of rows) {
    const own = row.selfUserMs + row.selfSysMs;
    const children = row.childrenUserMs + row.childrenSysMs;
    console.log(
      `  ${row.label.padEnd(20)} ${own.toFixed(2)} ms (${row.selfUserMs.toFixed(2)} + ${
        row.selfSysMs.toFixed(2)
      }) | ${children.toFixed(2)} ms (${row.childrenUserMs.toFixed(2)} + ${
        row.childrenSysMs.toFixed(2)
      }) | ${row.callsPerSecond.toFixed(0)}`,
    );
  }
}

if (import.meta.main) {
  if (Deno.args[0] === "--floor") {
    const figures = await floorHere(Number(Deno.args[1]), Number(Deno.args[2]));
    console.log(JSON.stringify(figures));
  } else {
    const calls = Number(Deno.args[0] ?? 2000);
    const inFlight = Number(Deno.args[1] ?? 8);
    console.log(
      `CPU per call, ${calls} calls, load ${Deno.loadavg()[0]!.toFixed(2)} before`,
    );
    printCallCpu(await measureCallCpu(calls, inFlight), inFlight);
  }
}
