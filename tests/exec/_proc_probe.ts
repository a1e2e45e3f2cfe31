/**
 * Reads the host's /proc for the process-tree tests, as a child process.
 * Deno lets only an all-access process read /proc, and the test suite runs
 * under narrow permissions: so the suite starts this script with `-A`, and the
 * script only reads /proc and answers on stdout. The query is a JSON object in
 * the HTMCP_PROC_QUERY variable (not argv, so a marker never appears in this
 * probe's own command line):
 *
 * - `{ "op": "list" }`: every process as `{ pid, uid, argv }`.
 * - `{ "op": "wait", "marker", "count", "timeoutMs" }`: polls every 10 ms until
 *   `count` processes have `marker` as one argv word (and no `--` word), then
 *   prints their pids; on timeout prints the pids seen last (fewer).
 * - `{ "op": "state", "pids" }`: the `/proc/PID/stat` state letter of each pid,
 *   or null when /proc/PID does not exist (dead and reaped).
 * - `{ "op": "peak", "uid", "marker", "intervalMs" }`: prints `ready` after
 *   the first sample, samples every `intervalMs` until stdin closes, then
 *   prints the largest count of processes of real uid `uid` whose command
 *   line contains `marker`.
 *
 * @module
 */

interface ProcEntry {
  readonly pid: number;
  readonly uid: number | null;
  readonly argv: readonly string[];
}

function read(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null; // exited while we looked
  }
}

/** Every process but this probe; zombies have an empty argv. */
function list(): ProcEntry[] {
  const out: ProcEntry[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    if (pid === Deno.pid) continue;
    const cmdline = read(`/proc/${pid}/cmdline`);
    if (cmdline === null) continue;
    const status = read(`/proc/${pid}/status`);
    const uid = status === null ? null : /^Uid:\s+(\d+)/m.exec(status)?.[1];
    out.push({
      pid,
      uid: uid === null || uid === undefined ? null : Number(uid),
      argv: cmdline === "" ? [] : cmdline.replace(/\0$/, "").split("\0"),
    });
  }
  return out;
}

/**
 * Pids whose argv has `marker` as one word: only processes whose own argv is
 * the marked program, so the launcher chain (whose argv repeats the whole
 * command after `--`) is not counted.
 */
function marked(marker: string): number[] {
  return list().filter((p) => p.argv.includes(marker) && !p.argv.includes("--")).map((p) => p.pid);
}

/** "R", "S", "Z"...; null when the pid does not exist at all. */
function state(pid: number): string | null {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answer(query: Record<string, unknown>): Promise<unknown> {
  switch (query.op) {
    case "list":
      return list();
    case "state":
      return (query.pids as number[]).map(state);
    case "wait": {
      const deadline = performance.now() + (query.timeoutMs as number);
      let pids = marked(query.marker as string);
      while (pids.length < (query.count as number) && performance.now() < deadline) {
        await sleep(10);
        pids = marked(query.marker as string);
      }
      return pids;
    }
    case "peak": {
      let open = true;
      const closed = Deno.stdin.readable.pipeTo(new WritableStream()).finally(() => open = false);
      const count = () =>
        list().filter((p) =>
          p.uid === query.uid && p.argv.join("\0").includes(query.marker as string)
        ).length;
      let peak = count();
      console.log("ready");
      while (open) {
        await sleep(query.intervalMs as number);
        peak = Math.max(peak, count());
      }
      await closed;
      return peak;
    }
    default:
      throw new Error(`Unknown probe query ${JSON.stringify(query)}.`);
  }
}

const query = JSON.parse(Deno.env.get("HTMCP_PROC_QUERY") ?? "{}");
console.log(JSON.stringify(await answer(query)));
