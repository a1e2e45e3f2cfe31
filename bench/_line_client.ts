/**
 * A minimal JSON-RPC client over a child's stdio, newline-delimited, with no
 * MCP library: what the raw-round-trip and peer benchmarks time, so that no
 * client library's own work (schema validation of each result) is counted
 * against one server and not another.
 *
 * @module
 */

/** What to start: the executable, its arguments and its whole environment. */
export interface LineServerLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** One JSON-RPC answer: its result or error, as parsed. */
export interface LineAnswer {
  readonly result?: unknown;
  readonly error?: unknown;
}

/** A started server and the requests sent to it, one at a time. */
export interface LineClient {
  /** Sends a request and waits for the answer with its id (other lines are skipped). */
  request(method: string, params: Record<string, unknown>): Promise<LineAnswer>;
  /** Sends a notification (no answer). */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** Closes the server's stdin and waits for it to exit (killing it after `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts `launch` in exactly its environment, stdin and stdout piped.
 *
 * @param launch The server to start.
 * @param stderr Where the server's stderr goes ("null" for quiet peers).
 */
export function spawnServer(
  launch: LineServerLaunch,
  stderr: "null" | "inherit",
): Deno.ChildProcess {
  return new Deno.Command(launch.command, {
    args: [...launch.args],
    env: { ...launch.env },
    clearEnv: true,
    ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }),
    stdin: "piped",
    stdout: "piped",
    stderr,
  }).spawn();
}

/**
 * Starts `launch` and sends `initialize` (protocol 2025-06-18) and
 * `notifications/initialized`.
 *
 * @param launch The server to start.
 * @param stderr Where the server's stderr goes ("null" for quiet peers).
 * @returns The client, once `initialize` was answered.
 * @throws {Error} When the server closes its stdout or answers `initialize` with an error.
 */
export async function startLineClient(
  launch: LineServerLaunch,
  stderr: "null" | "inherit" = "null",
): Promise<LineClient> {
  const child = spawnServer(launch, stderr);
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const encoder = new TextEncoder();
  let buffered = "";
  let nextId = 0;
  const send = (message: Record<string, unknown>) =>
    writer.write(encoder.encode(JSON.stringify(message) + "\n"));
  const client: LineClient = {
    async request(method, params) {
      const id = ++nextId;
      await send({ jsonrpc: "2.0", id, method, params });
      while (true) {
        const newline = buffered.indexOf("\n");
        if (newline >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          let message: { id?: unknown; result?: unknown; error?: unknown };
          try {
            message = JSON.parse(line);
          } catch {
            continue; // a peer's log line on stdout
          }
          if (message.id !== id) continue;
          return { result: message.result, error: message.error };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`${launch.command} closed its stdout during ${method}`);
        buffered += value;
      }
    },
    async notify(method, params = {}) {
      await send({ jsonrpc: "2.0", method, params });
    },
    async close(graceMs = 2_000) {
      await writer.close().catch(() => {});
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL"); // our own child, by its handle
        } catch {
          // already gone
        }
      }, graceMs);
      await child.status;
      clearTimeout(timer);
      await reader.cancel().catch(() => {});
    },
  };
  const init = await client.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "htmcp-bench", version: "0" },
  });
  if (init.error !== undefined) {
    await client.close();
    throw new Error(`${launch.command}: initialize failed: ${JSON.stringify(init.error)}`);
  }
  await client.notify("notifications/initialized");
  return client;
}
