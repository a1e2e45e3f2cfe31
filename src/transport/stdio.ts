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
import { createMcpServer } from "../server/mcp_server.ts";
import type { ServerContext } from "../context/mod.ts";
import { STDIO_CALLER } from "../tools/caller.ts";
import { unreadBound } from "./backlog.ts";
import { watchParent } from "./orphan.ts";
import { BoundedStdioTransport } from "./stdio_transport.ts";
import { startStdioEras } from "./stdio_era.ts";
import { CallRegistry } from "../server/calls.ts";
import { createModernEra, MODERN_ERA } from "../protocol/mod.ts";
import { serverIdentity } from "../server/identity.ts";
import { serverInstructions } from "../server/instructions.ts";

/**
 * Largest JSON-RPC message accepted on stdin. A command is at most 16 KiB, so
 * 4 MiB is generous; a longer message is refused with a JSON-RPC error and
 * skipped, and the server goes on.
 */
export const MAX_STDIO_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Serves `context` over stdio until stdin closes, a stop signal arrives, the
 * client stops reading stdout (its unread answers pass the bound), or the
 * launcher that started the server is gone.
 *
 * @returns The reason the server stopped.
 */
export async function serveStdio(context: ServerContext): Promise<string> {
  const modernEra = await createModernEra({
    context,
    info: serverIdentity(),
    instructions: serverInstructions(context),
    build: (caller, calls) => createMcpServer(context, caller, calls),
    deferLoad: true,
  });
  if (!modernEra.ok) {
    await context.close(modernEra.message);
    return modernEra.message;
  }
  const era = modernEra.era;
  const transport = new BoundedStdioTransport(Deno.stdin.readable, Deno.stdout, {
    maxMessageBytes: MAX_STDIO_MESSAGE_BYTES,
    maxBacklogBytes: unreadBound(context.policy.limits.maxOutputBytes),
  });
  const { promise: stopped, resolve: stop } = Promise.withResolvers<string>();
  transport.onclose = () => stop(transport.closeReason ?? "stdin closed");
  const onSignal = (name: Deno.Signal) => () => stop(`received ${name}`);
  const handlers = (["SIGTERM", "SIGINT"] as const).map((name) => {
    const handler = onSignal(name);
    Deno.addSignalListener(name, handler);
    return [name, handler] as const;
  });
  const unwatch = watchParent((reason) => stop(reason));
  // One caller for the whole connection (the operator's own client), in
  // either era; the first message decides which.
  const calls = new CallRegistry();
  const eras = await startStdioEras({
    transport,
    legacy: () => createMcpServer(context, STDIO_CALLER, calls),
    loadModern: () => era.load(),
    modern: () => era.serverFor(STDIO_CALLER, calls),
    onUnclaimed: (method, code) => {
      void context.audit.writeEvent("protocol_refused", {
        protocol_era: MODERN_ERA,
        transport: "stdio",
        client_id: null,
        check: "envelope",
        jsonrpc_code: code,
        method,
        mcp_method_header: null,
        mcp_name_header: null,
      }).catch(() => {});
    },
  });
  const reason = await stopped;
  unwatch();
  for (const [name, handler] of handlers) Deno.removeSignalListener(name, handler);
  await context.close(reason);
  await eras.close().catch(() => {});
  return reason;
}
