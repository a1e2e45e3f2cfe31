/**
 * MCP over stdin/stdout for a local client that started this process.
 *
 * Shutdown is part of the contract: when stdin closes (the client quit) or a
 * SIGTERM/SIGINT arrives, every running command is killed, its outcome record
 * is written, and only then does the process exit. A client that vanishes
 * must not leave commands running unobserved.
 *
 * @module
 */
import process from "node:process";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer } from "../server/mcp_server.ts";
import type { ServerContext } from "../server/context.ts";
import { STDIO_CALLER } from "../tools/caller.ts";

/**
 * Largest JSON-RPC message accepted on stdin. A command is at most 16 KiB, so
 * 4 MiB is generous; the bound keeps a misbehaving client from growing the
 * read buffer without limit.
 */
export const MAX_STDIO_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Serves `context` over stdio until stdin closes or a stop signal arrives.
 *
 * @returns The reason the server stopped.
 */
export async function serveStdio(context: ServerContext): Promise<string> {
  const server = createMcpServer(context, STDIO_CALLER);
  const transport = new StdioServerTransport(process.stdin, process.stdout, {
    maxBufferSize: MAX_STDIO_MESSAGE_BYTES,
  });
  const { promise: stopped, resolve: stop } = Promise.withResolvers<string>();
  process.stdin.once("end", () => stop("stdin closed"));
  process.stdin.once("close", () => stop("stdin closed"));
  transport.onclose = () => stop("transport closed");
  const onSignal = (name: Deno.Signal) => () => stop(`received ${name}`);
  const handlers = (["SIGTERM", "SIGINT"] as const).map((name) => {
    const handler = onSignal(name);
    Deno.addSignalListener(name, handler);
    return [name, handler] as const;
  });
  await server.connect(transport);
  const reason = await stopped;
  for (const [name, handler] of handlers) Deno.removeSignalListener(name, handler);
  await context.close(reason);
  await server.close().catch(() => {});
  return reason;
}
