/**
 * A raw JSON-RPC client over a child's stdio that keeps several requests in
 * flight at once (answers matched by id), with no MCP library: what the
 * benchmarks of calls in flight drive, so no client library's own work is
 * counted against the server.
 *
 * @module
 */
import { type LineServerLaunch, spawnServer } from "./_line_client.ts";

/** A started server that answers `run_command("true")` calls, several at a time. */
export interface MultiplexedServer {
  /** The server's pid (its own process: `launch.command` is the server). */
  readonly pid: number;
  /** One `run_command(command)` (default `true`); throws when the call fails. */
  call(command?: string): Promise<void>;
  /** Closes its stdin and waits for it to exit (killing it, by its handle, after 5 s). */
  close(): Promise<void>;
}

/**
 * Starts `launch` and completes the `initialize` handshake (protocol 2025-06-18).
 *
 * @throws {Error} When `initialize` is answered with an error, or the
 *   server ends before answering (then every request waiting fails too).
 */
export async function startMultiplexed(launch: LineServerLaunch): Promise<MultiplexedServer> {
  const child = spawnServer(launch, "null");
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  type Waiter = { resolve(message: { error?: unknown }): void; reject(error: Error): void };
  const waiting = new Map<number, Waiter>();
  let ended: Error | null = null;
  let nextId = 0;
  const reading = (async () => {
    let buffered = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const message = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        waiting.get(message.id)?.resolve(message);
        waiting.delete(message.id);
      }
    }
  })().finally(async () => {
    // A server that ends (or never starts) fails what waits, instead of
    // leaving the benchmark waiting on an answer that cannot come.
    const { code } = await child.status;
    ended = new Error(`the server closed its stdout (exit status ${code})`);
    for (const waiter of waiting.values()) waiter.reject(ended);
    waiting.clear();
  });
  const request = async (method: string, params: Record<string, unknown>) => {
    if (ended !== null) throw ended;
    const id = ++nextId;
    const answered = new Promise<{ error?: unknown }>((resolve, reject) =>
      waiting.set(id, { resolve, reject })
    );
    await writer.write(
      encoder.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"),
    );
    const message = await answered;
    if (message.error !== undefined) throw new Error(`${method}: ${JSON.stringify(message.error)}`);
    return message;
  };
  await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "htmcp-bench", version: "0" },
  });
  await writer.write(
    encoder.encode(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n"),
  );
  return {
    pid: child.pid,
    async call(command = "true") {
      const answer = await request("tools/call", {
        name: "run_command",
        arguments: { command },
      }) as { result?: { isError?: boolean } };
      if (answer.result?.isError) throw new Error(`run_command failed: ${JSON.stringify(answer)}`);
    },
    async close() {
      await writer.close().catch(() => {});
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL"); // our own child, by its handle
        } catch {
          // already gone
        }
      }, 5_000);
      await child.status;
      clearTimeout(timer);
      await reading.catch(() => {});
    },
  };
}

/** Calls per second of `count` calls of `command`, `inFlight` at a time. */
export async function burst(
  server: MultiplexedServer,
  count: number,
  inFlight: number,
  command = "true",
): Promise<number> {
  let left = count;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (left-- > 0) await server.call(command);
  }));
  return count / ((performance.now() - t0) / 1000);
}
