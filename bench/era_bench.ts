/**
 * The two protocol eras side by side, in one run: cold start (spawn to the
 * first answered `tools/list`) and `run_command("true")` round trips, over
 * stdio and over HTTP (auth off, loopback), for
 *
 * - today's client: SDK v1 (`@modelcontextprotocol/sdk`), 2025-11-25 sessions;
 * - the SDK v2 client in the 2025 era (the `initialize` handshake);
 * - the SDK v2 client pinned to 2026-07-28 (stateless: no handshake, a fresh
 *   server instance per HTTP request).
 *
 * The v2 stdio client is a subclass of its stdio transport so that it probes
 * in place instead of spawning a sibling process for the probe: the figure
 * is the server's cold start, not the client's probe strategy.
 *
 * Run: deno run -A bench/era_bench.ts [calls]
 *
 * @module
 */
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1Http } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { startCliServer, writeLoopbackPolicy } from "../scripts/conformance.ts";
import { percentiles, type ServerLaunch } from "./stdio_roundtrip.ts";

/** Probes in place (the SDK spawns a sibling only for its own base class). */
class InPlaceStdio extends StdioClientTransport {}

/** Which client, in which era. */
export type EraClient = "v1 2025-11-25" | "v2 2025" | "v2 2026-07-28";
export const ERA_CLIENTS: readonly EraClient[] = ["v1 2025-11-25", "v2 2025", "v2 2026-07-28"];

/** One measured row. */
export interface EraRow {
  readonly transport: "stdio" | "http";
  readonly client: EraClient;
  readonly coldStartMs: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

interface Connected {
  listTools(): Promise<unknown>;
  call(command: string): Promise<unknown>;
  close(): Promise<void>;
}

async function open(
  client: EraClient,
  target: { stdio: ServerLaunch } | { url: string },
): Promise<Connected> {
  if (client === "v1 2025-11-25") {
    const v1 = new V1Client({ name: "htmcp-bench", version: "1" });
    await v1.connect(
      "stdio" in target
        ? new V1Stdio({ ...target.stdio, stderr: "ignore" })
        : new V1Http(new URL(target.url)),
    );
    return {
      listTools: () => v1.listTools(),
      call: (command) => v1.callTool({ name: "run_command", arguments: { command } }),
      close: () => v1.close(),
    };
  }
  const v2 = new Client({ name: "htmcp-bench", version: "1" }, {
    versionNegotiation: { mode: client === "v2 2025" ? "legacy" : { pin: "2026-07-28" } },
  });
  await v2.connect(
    "stdio" in target
      ? new InPlaceStdio({ ...target.stdio, stderr: "ignore" })
      : new StreamableHTTPClientTransport(new URL(target.url)),
  );
  return {
    listTools: () => v2.listTools(),
    call: (command) => v2.callTool({ name: "run_command", arguments: { command } }),
    close: () => v2.close(),
  };
}

async function measure(
  client: EraClient,
  target: { stdio: ServerLaunch } | { url: string },
  calls: number,
): Promise<{ cold: number; samples: number[] }> {
  const t0 = performance.now();
  const connected = await open(client, target);
  await connected.listTools();
  const cold = performance.now() - t0;
  try {
    for (let i = 0; i < 10; i++) await connected.call("true"); // warm-up
    const samples: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await connected.call("true");
      samples.push(performance.now() - t);
    }
    return { cold, samples };
  } finally {
    await connected.close();
  }
}

/**
 * Measures every client in both transports. Rounds interleave the clients,
 * so machine noise lands on every row alike.
 */
export async function measureEras(
  stdio: ServerLaunch,
  calls = 100,
  rounds = 3,
): Promise<EraRow[]> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-eras-" });
  const server = await startCliServer(await writeLoopbackPolicy(dir));
  const rows: EraRow[] = [];
  try {
    for (const transport of ["stdio", "http"] as const) {
      const colds = new Map<EraClient, number[]>();
      const samples = new Map<EraClient, number[]>();
      for (let round = 0; round < rounds; round++) {
        for (const client of ERA_CLIENTS) {
          const target = transport === "stdio" ? { stdio } : { url: server.url };
          const got = await measure(client, target, Math.ceil(calls / rounds));
          colds.set(client, [...(colds.get(client) ?? []), got.cold]);
          samples.set(client, [...(samples.get(client) ?? []), ...got.samples]);
        }
      }
      for (const client of ERA_CLIENTS) {
        const p = percentiles(samples.get(client) ?? []);
        rows.push({
          transport,
          client,
          coldStartMs: percentiles(colds.get(client) ?? []).p50,
          p50Ms: p.p50,
          p95Ms: p.p95,
        });
      }
    }
    return rows;
  } finally {
    server.child.kill("SIGTERM");
    await server.child.status;
    await Deno.remove(dir, { recursive: true });
  }
}

/** Prints the section of `bench/main.ts`. */
export function printEraRows(rows: readonly EraRow[]): void {
  console.log("   transport  client          first answer   call p50/p95");
  for (const row of rows) {
    console.log(
      `   ${row.transport.padEnd(9)}  ${row.client.padEnd(14)}  ${
        row.coldStartMs.toFixed(1).padStart(8)
      } ms   ${row.p50Ms.toFixed(2)}/${row.p95Ms.toFixed(2)} ms`,
    );
  }
  console.log(
    "   (stdio: spawn to first tools/list; http: connect to first tools/list on a running server)",
  );
}

if (import.meta.main) {
  const { serverUnderFlags, writePolicy } = await import("./_server.ts");
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-" });
  await Deno.chmod(dir, 0o755);
  try {
    const launch = await serverUnderFlags(await writePolicy(dir, "none"));
    printEraRows(await measureEras(launch, Number(Deno.args[0] ?? 100)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
