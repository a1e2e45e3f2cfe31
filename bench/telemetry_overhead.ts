/**
 * The per-call cost of the tool-call instrumentation alone, in process, so
 * that a loaded machine's spawn noise does not drown it: the real SDK client
 * and server joined by an in-memory transport pair, one trivial tool, and
 * rounds that interleave four servers: not instrumented; instrumented with
 * telemetry off and `[log] level = "error"` (no line); instrumented with the
 * info line rendered (to a discarding sink, no terminal I/O); instrumented
 * with the OpenTelemetry export on (to a loopback receiver).
 *
 * `deno run -A bench/telemetry_overhead.ts` (HTMCP_BENCH_CALLS per round, default 2000).
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { createRedactor } from "../src/redact/mod.ts";
import {
  configureOperatorLog,
  instrumentToolCalls,
  startTelemetry,
  stopTelemetry,
} from "../src/telemetry/mod.ts";
import { STDIO_CALLER } from "../src/tools/caller.ts";

const CALLS = Number(Deno.env.get("HTMCP_BENCH_CALLS") ?? 2000);
const ROUNDS = 5;

/** One end of an in-memory, in-order message pipe. */
class MemoryEnd {
  peer: MemoryEnd | null = null;
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  start(): Promise<void> {
    return Promise.resolve();
  }
  send(message: JSONRPCMessage): Promise<void> {
    const peer = this.peer;
    queueMicrotask(() => peer?.onmessage?.(message));
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}

function pair(): [MemoryEnd, MemoryEnd] {
  const a = new MemoryEnd();
  const b = new MemoryEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

async function connected(instrumented: boolean): Promise<Client> {
  const server = new McpServer({ name: "bench", version: "0" });
  if (instrumented) {
    instrumentToolCalls(
      server,
      createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] }),
      STDIO_CALLER,
    );
  }
  server.registerTool("noop", {
    description: "returns at once",
    inputSchema: { command: z.string() },
  }, () => ({
    content: [{ type: "text", text: "ok" }],
    structuredContent: { code: "OK", exit_code: 0 },
  }));
  const [serverEnd, clientEnd] = pair();
  await server.connect(serverEnd);
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(clientEnd);
  return client;
}

async function perCallMicros(client: Client): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) {
    await client.callTool({ name: "noop", arguments: { command: "git status --short" } });
  }
  return (performance.now() - t0) * 1000 / CALLS;
}

if (import.meta.main) {
  const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.arrayBuffer();
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  const plain = await connected(false);
  const instrumented = await connected(true);
  const forms: [string, () => Promise<void>][] = [
    ["not instrumented", () => Promise.resolve()],
    ['instrumented, telemetry off, [log] level = "error"', () => {
      configureOperatorLog({ format: "text", level: "error" }, () => {});
      return Promise.resolve();
    }],
    ["instrumented, telemetry off, info line rendered (text)", () => {
      configureOperatorLog({ format: "text", level: "info" }, () => {});
      return Promise.resolve();
    }],
    ['instrumented, telemetry on, [log] level = "error"', async () => {
      configureOperatorLog({ format: "text", level: "error" }, () => {});
      await startTelemetry({
        otlpEndpoint: `http://127.0.0.1:${receiver.addr.port}`,
        serviceName: "bench",
        metricsIntervalMs: 1000,
      }, { running: () => 0 });
    }],
  ];
  const samples = forms.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, [, setUp]] of forms.entries()) {
      await setUp();
      samples[index]!.push(await perCallMicros(index === 0 ? plain : instrumented));
      await stopTelemetry();
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const base = median(samples[0]!);
  console.log(`tools/call round trip in process, ${CALLS} calls x ${ROUNDS} rounds (median)`);
  console.log("| Form | µs per call | over not instrumented |");
  console.log("| --- | --- | --- |");
  for (const [index, [form]] of forms.entries()) {
    const value = median(samples[index]!);
    console.log(`| ${form} | ${value.toFixed(1)} | +${(value - base).toFixed(1)} µs |`);
  }
  await plain.close();
  await instrumented.close();
  await receiver.shutdown();
}
