/**
 * The MCP server surface: the context one server process shares across
 * sessions ({@linkcode createServerContext}), the per-session SDK server
 * ({@linkcode createMcpServer}), the registry through which a transport
 * cancels calls in flight, the caller identities, the concurrency limiter,
 * and the watch that reports an edited policy file (never applies it). The
 * tools themselves are `src/tools/`, one file each.
 *
 * Denies on failure: a part of the context that cannot start (audit log,
 * state store, egress proxy, sandbox) stops the server before it serves.
 *
 * @module
 */
export { type ContextResult, createServerContext } from "./context.ts";
export type { ServerContext } from "../context/mod.ts";
export { createMcpServer } from "./mcp_server.ts";
export { CallRegistry, requestKey } from "./calls.ts";
export { type AcquireResult, ConcurrencyLimiter, type Release } from "../concurrency/mod.ts";
export { type CallerIdentity, type Scope, STDIO_CALLER } from "../tools/caller.ts";
export {
  POLICY_WATCH_INTERVAL_MS,
  type PolicyWatchTarget,
  watchPolicyFile,
} from "./policy_watch.ts";
