/**
 * A three-stage pipeline in one `run_command` call against the same three
 * commands run as three calls, each fed the previous one's output through
 * `stdin` (what a model without pipelines has to do), through the real SDK
 * client over stdio, interleaved in batches so machine noise lands on both
 * sides alike. Reported, never asserted.
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type Percentiles, percentiles } from "./stdio_roundtrip.ts";

export const PIPELINE = "seq 1 1000 | sort -r | head -5";
const EXPECTED = "999\n998\n997\n996\n995\n";

export interface PipelineFigures {
  readonly oneCall: Percentiles;
  readonly threeCalls: Percentiles;
}

async function call(client: Client, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name: "run_command", arguments: args });
  const content = result.structuredContent as { code?: string; stdout?: string } | undefined;
  if (content?.code !== "OK") {
    throw new Error(`run_command(${JSON.stringify(args).slice(0, 80)}) returned ${content?.code}`);
  }
  return content.stdout ?? "";
}

async function oneCall(client: Client): Promise<number> {
  const t0 = performance.now();
  const out = await call(client, { command: PIPELINE });
  const ms = performance.now() - t0;
  if (out !== EXPECTED) throw new Error(`the pipeline printed ${JSON.stringify(out)}`);
  return ms;
}

async function threeCalls(client: Client): Promise<number> {
  const t0 = performance.now();
  const numbers = await call(client, { argv: ["seq", "1", "1000"] });
  const sorted = await call(client, { argv: ["sort", "-r"], stdin: numbers });
  const out = await call(client, { argv: ["head", "-5"], stdin: sorted });
  const ms = performance.now() - t0;
  if (out !== EXPECTED) throw new Error(`the three calls printed ${JSON.stringify(out)}`);
  return ms;
}

/**
 * @param client A client connected to a server whose policy allows seq, sort and head.
 * @param rounds How many of each; interleaved in batches of ten.
 */
export async function measurePipeline(client: Client, rounds: number): Promise<PipelineFigures> {
  await oneCall(client);
  await threeCalls(client); // warm-up
  const one: number[] = [];
  const three: number[] = [];
  for (let done = 0; done < rounds; done += 10) {
    for (let i = 0; i < 10; i++) one.push(await oneCall(client));
    for (let i = 0; i < 10; i++) three.push(await threeCalls(client));
  }
  return { oneCall: percentiles(one), threeCalls: percentiles(three) };
}
