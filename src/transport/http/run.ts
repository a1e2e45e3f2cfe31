/**
 * The CLI's way to serve HTTP: start, wait for SIGTERM or SIGINT, stop
 * accepting, close every session, then close the context (which kills running
 * commands and writes their outcome records before the log closes).
 *
 * @module
 */
import type { ServerContext } from "../../context/mod.ts";
import { describeFdBudget, MCP_PATH, serveHttp } from "./server.ts";
import { watchParent } from "../orphan.ts";
import { operatorLog } from "../../telemetry/mod.ts";

/**
 * Serves `context` on `listen` until a stop signal arrives.
 *
 * @param context The shared context; closed before this resolves.
 * @param listen `HOST:PORT` (the `--http` flag or `[http] listen`).
 * @returns The process exit code: 0 after a clean stop, 1 when the server could not start.
 */
export async function serveHttpUntilStopped(
  context: ServerContext,
  listen: string,
): Promise<number> {
  const started = await serveHttp(context, {
    listen,
    baseUrl: context.policy.http.baseUrl,
    adminPin: readAdminPin(),
  });
  if (!started.ok) {
    operatorLog().write("error", "server_start_failed", started.message);
    await context.close("HTTP server could not start");
    return 1;
  }
  const server = started.server;
  const log = operatorLog();
  log.lifecycle("fd_budget", describeFdBudget(server.fdBudget), {
    max_connections: server.fdBudget.maxConnections,
  });
  log.lifecycle(
    "server_listening",
    `serving MCP at ${server.baseUrl}${MCP_PATH} (listening on ${server.url})`,
    { url: `${server.baseUrl}${MCP_PATH}`, listen: server.url },
  );

  const { promise: stopped, resolve: stop } = Promise.withResolvers<string>();
  const handlers = (["SIGTERM", "SIGINT"] as const).map((name) => {
    const handler = () => stop(`received ${name}`);
    Deno.addSignalListener(name, handler);
    return [name, handler] as const;
  });
  server.finished.then(() => stop("HTTP server finished"));
  const unwatch = watchParent((why) => stop(why));
  const reason = await stopped;
  unwatch();
  for (const [name, handler] of handlers) Deno.removeSignalListener(name, handler);
  await server.shutdown();
  await context.close(reason);
  log.lifecycle("server_stopped", `stopped (${reason}).`, { reason });
  return 0;
}

/** `HTMCP_OAUTH_ADMIN_PIN`; unset, empty or unreadable under the permission set counts as unset. */
function readAdminPin(): string | null {
  try {
    const value = Deno.env.get("HTMCP_OAUTH_ADMIN_PIN");
    return value === undefined || value === "" ? null : value;
  } catch {
    return null;
  }
}
