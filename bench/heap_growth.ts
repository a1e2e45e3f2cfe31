/**
 * What grows when RSS grows: the server started under its generated
 * permission flags plus `--inspect` on a loopback port, driven with
 * `run_command("true")` through the real SDK client, and at each checkpoint
 * asked over the inspector (Chrome DevTools Protocol) for a full collection
 * and then `Deno.memoryUsage()`, beside RSS from /proc. A heap that is still
 * larger after a full collection is live growth (something keeps per-call
 * state); RSS growing while the collected heap stays flat is the collector's
 * and the allocator's slack.
 *
 * With `--snapshots`, a heap snapshot is taken at the first and the last
 * checkpoint and the constructors whose instance count grew most are listed:
 * that names the structure, if any, that grows with calls. Serializing a
 * snapshot costs the server about 200 MiB of malloc'd memory that glibc
 * keeps, so RSS after the first snapshot says nothing; the heap figures do.
 *
 * The inspector is for this bench only; the server in production never
 * listens on one (the permission flags do not change).
 *
 * Run: deno run -A bench/heap_growth.ts [total-calls] [in-flight] [--snapshots] [--maps]
 *   [--v8-flags=...] (added to the server's own, to try a collector setting)
 *   [--command=...] (instead of `true`, whatever it answers: `--command=id` is refused)
 *
 * @module
 */
import { serverUnderFlags, writePolicy } from "./_server.ts";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connect, cpuMs, roundTrips, rssMiB } from "./stdio_roundtrip.ts";

/**
 * `n` calls of `run_command(command)` whatever they answer: with `--command`,
 * a refused command drives the refusal path (its records and aggregation).
 */
async function anyCalls(client: Client, command: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await client.callTool({ name: "run_command", arguments: { command } });
  }
}

/** One checkpoint: RSS, and the heap after a full collection. */
export interface HeapSample {
  readonly calls: number;
  readonly rssMiB: number;
  /** RSS again right after the full collection. */
  readonly rssAfterGcMiB: number;
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
  /** The server's own CPU time per call so far (commands excluded), in ms. */
  readonly cpuMsPerCall: number;
  /** RSS by kind of mapping, from /proc/PID/smaps: brk heap, other anonymous, file-backed. */
  readonly brkMiB: number;
  readonly anonMiB: number;
  readonly fileMiB: number;
}

/** The `count` mappings of `pid` holding the most RSS, with their size and thread count. */
async function largestMappings(pid: number, count: number): Promise<string[]> {
  const text = await Deno.readTextFile(`/proc/${pid}/smaps`);
  const maps: { header: string; sizeKiB: number; rssKiB: number }[] = [];
  for (const line of text.split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header !== null) {
      const size = (parseInt(header[2] ?? "0", 16) - parseInt(header[1] ?? "0", 16)) / 1024;
      maps.push({ header: `${header[3]} ${header[4] || "(anon)"}`, sizeKiB: size, rssKiB: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    const last = maps.at(-1);
    if (rss !== null && last !== undefined) last.rssKiB = Number(rss[1]);
  }
  let threads = 0;
  for await (const _ of Deno.readDir(`/proc/${pid}/task`)) threads++;
  return [
    `threads ${threads}, mappings ${maps.length}`,
    ...maps.sort((a, b) => b.rssKiB - a.rssKiB).slice(0, count).map((m) =>
      `${(m.rssKiB / 1024).toFixed(1).padStart(7)} MiB resident of ${
        (m.sizeKiB / 1024).toFixed(1).padStart(8)
      } MiB  ${m.header}`
    ),
  ];
}

/** RSS of `pid` split by kind of mapping (the bench runs unconfined). */
async function rssByKind(pid: number): Promise<{ brk: number; anon: number; file: number }> {
  const text = await Deno.readTextFile(`/proc/${pid}/smaps`);
  let kind: "brk" | "anon" | "file" = "anon";
  const kib = { brk: 0, anon: 0, file: 0 };
  for (const line of text.split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header !== null) {
      const path = header[2] ?? "";
      kind = path === "[heap]" ? "brk" : path === "" || path.startsWith("[") ? "anon" : "file";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) kib[kind] += Number(rss[1]);
  }
  return { brk: kib.brk / 1024, anon: kib.anon / 1024, file: kib.file / 1024 };
}

const MiB = 1024 * 1024;

/** A minimal CDP session over the inspector's WebSocket. */
class Inspector {
  #socket: WebSocket;
  #next = 1;
  #pending = new Map<number, (message: Record<string, unknown>) => void>();
  #chunks: string[] = [];

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as Record<string, unknown>;
      if (typeof message.id === "number") {
        this.#pending.get(message.id)?.(message);
        this.#pending.delete(message.id);
      } else if (message.method === "HeapProfiler.addHeapSnapshotChunk") {
        this.#chunks.push((message.params as { chunk: string }).chunk);
      }
    };
  }

  static async open(port: number): Promise<Inspector> {
    let url: string | undefined;
    for (let attempt = 0; attempt < 100 && url === undefined; attempt++) {
      try {
        const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as {
          webSocketDebuggerUrl: string;
        }[];
        url = targets[0]?.webSocketDebuggerUrl;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    if (url === undefined) throw new Error("The server's inspector did not answer.");
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    return new Inspector(socket);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  async memoryUsage(): Promise<Deno.MemoryUsage> {
    await this.send("HeapProfiler.collectGarbage");
    const reply = await this.send("Runtime.evaluate", {
      expression: "JSON.stringify(Deno.memoryUsage())",
      returnByValue: true,
    });
    const value = (reply.result as { result: { value: string } }).result.value;
    return JSON.parse(value) as Deno.MemoryUsage;
  }

  /** Instance count per constructor name, from a full heap snapshot. */
  async countsByName(): Promise<Map<string, { count: number; bytes: number }>> {
    this.#chunks = [];
    await this.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const snapshot = JSON.parse(this.#chunks.join("")) as {
      snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
      nodes: number[];
      strings: string[];
    };
    this.#chunks = [];
    const fields = snapshot.snapshot.meta.node_fields;
    const width = fields.length;
    const typeAt = fields.indexOf("type");
    const nameAt = fields.indexOf("name");
    const sizeAt = fields.indexOf("self_size");
    const types = snapshot.snapshot.meta.node_types[0];
    const counts = new Map<string, { count: number; bytes: number }>();
    for (let i = 0; i < snapshot.nodes.length; i += width) {
      const type = types[snapshot.nodes[i + typeAt] ?? 0] ?? "?";
      const rawName = snapshot.strings[snapshot.nodes[i + nameAt] ?? 0] ?? "?";
      // Strings and code are grouped by type; objects by constructor name.
      const name = type === "object" || type === "closure" ? `${type}:${rawName}` : type;
      const entry = counts.get(name) ?? { count: 0, bytes: 0 };
      entry.count++;
      entry.bytes += snapshot.nodes[i + sizeAt] ?? 0;
      counts.set(name, entry);
    }
    return counts;
  }

  close(): void {
    this.#socket.close();
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Runs `total` calls, `inFlight` at a time, sampling at 1,000, 2,500, 5,000 and `total`.
 *
 * @param total Calls in all.
 * @param inFlight Concurrent callers on the one connection (at most max_concurrent: 4).
 * @param snapshots Whether to diff heap snapshots between the first and last checkpoint.
 * @param onSample Called with each sample as it is taken.
 * @returns The samples and, with `snapshots`, the largest growths by constructor.
 */
export async function measureHeapGrowth(
  total = 10_000,
  inFlight = 4,
  snapshots = false,
  onSample: (sample: HeapSample) => void = () => {},
): Promise<{ samples: HeapSample[]; grown: string[] }> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-heap-" });
  await Deno.chmod(dir, 0o755);
  try {
    const launch = await serverUnderFlags(await writePolicy(dir, "none"));
    const port = freePort();
    const v8 = Deno.args.find((arg) => arg.startsWith("--v8-flags="));
    const command = Deno.args.find((arg) => arg.startsWith("--command="))?.slice(
      "--command=".length,
    );
    const args = [
      launch.args[0] ?? "run",
      `--inspect=127.0.0.1:${port}`,
      ...(v8 === undefined ? [] : [v8]),
      ...launch.args.slice(1),
    ];
    const { client, pid } = await connect({ ...launch, args });
    if (pid === undefined) throw new Error("The server's pid is unknown.");
    const inspector = await Inspector.open(port);
    const samples: HeapSample[] = [];
    let first: Map<string, { count: number; bytes: number }> | undefined;
    let last: Map<string, { count: number; bytes: number }> | undefined;
    let done = 0;
    const checkpoints = [1_000, 2_500, 5_000].filter((target) => target < total);
    try {
      for (const target of [...checkpoints, total]) {
        const per = Math.ceil((target - done) / inFlight);
        await Promise.all(
          Array.from(
            { length: inFlight },
            () =>
              command === undefined
                ? roundTrips(client, "true", per)
                : anyCalls(client, command, per),
          ),
        );
        done += per * inFlight;
        // RSS first, as bench/rss_growth.ts samples it (no forced collection).
        await new Promise((resolve) => setTimeout(resolve, 500));
        const rss = await rssMiB(pid);
        const kinds = await rssByKind(pid);
        const usage = await inspector.memoryUsage();
        const rssAfterGc = await rssMiB(pid);
        const sample = {
          calls: done,
          rssMiB: rss,
          rssAfterGcMiB: rssAfterGc,
          heapUsedMiB: usage.heapUsed / MiB,
          heapTotalMiB: usage.heapTotal / MiB,
          externalMiB: usage.external / MiB,
          cpuMsPerCall: await cpuMs(pid) / done,
          brkMiB: kinds.brk,
          anonMiB: kinds.anon,
          fileMiB: kinds.file,
        };
        samples.push(sample);
        onSample(sample);
        if (Deno.args.includes("--maps")) {
          for (const line of await largestMappings(pid, 12)) console.log(`    ${line}`);
        }
        if (snapshots && target === checkpoints[0]) first = await inspector.countsByName();
        if (snapshots && target === total) last = await inspector.countsByName();
      }
    } finally {
      inspector.close();
      await client.close();
    }
    const grown: string[] = [];
    if (first !== undefined && last !== undefined) {
      const before = first;
      const deltas = [...last].map(([name, after]) => {
        const was = before.get(name) ?? { count: 0, bytes: 0 };
        return { name, count: after.count - was.count, bytes: after.bytes - was.bytes };
      }).sort((a, b) => b.bytes - a.bytes).slice(0, 25);
      for (const d of deltas) {
        grown.push(
          `${d.name.padEnd(50)} ${String(d.count).padStart(8)} objects ${
            (d.bytes / 1024).toFixed(1).padStart(10)
          } KiB`,
        );
      }
    }
    return { samples, grown };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const positional = Deno.args.filter((arg) => !arg.startsWith("--"));
  const total = Number(positional[0] ?? 10_000);
  const inFlight = Number(positional[1] ?? 4);
  const snapshots = Deno.args.includes("--snapshots");
  const { grown } = await measureHeapGrowth(total, inFlight, snapshots, (s) => {
    console.log(
      `after ${String(s.calls).padStart(6)} calls: RSS ${s.rssMiB.toFixed(1)} MiB ` +
        `(${s.rssAfterGcMiB.toFixed(1)} after GC), ` +
        `after full GC heapUsed ${s.heapUsedMiB.toFixed(1)} / heapTotal ${
          s.heapTotalMiB.toFixed(1)
        } MiB, external ${s.externalMiB.toFixed(1)} MiB; ` +
        `RSS brk ${s.brkMiB.toFixed(1)} anon ${s.anonMiB.toFixed(1)} file ${
          s.fileMiB.toFixed(1)
        }; ` +
        `CPU ${s.cpuMsPerCall.toFixed(2)} ms/call`,
    );
  });
  if (grown.length > 0) {
    console.log("largest growth between the first and last checkpoint (by self size):");
    for (const line of grown) console.log(`  ${line}`);
  }
}
