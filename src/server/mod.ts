/**
 * The MCP server surface: the context one server process shares across
 * sessions ({@linkcode createServerContext}), the registry through which a transport
 * cancels calls in flight, the caller identities, the concurrency limiter,
 * and the watch that reports an edited policy file (never applies it). The
 * tools themselves are `src/tools/`, one file each. The per-session SDK
 * server (`createMcpServer` in `mcp_server.ts`) is not part of this surface:
 * it returns the SDK's `McpServer`, so only the two transports that connect
 * it import it, from its own file.
 *
 * Denies on failure: a part of the context that cannot start (audit log,
 * state store, egress proxy, sandbox) stops the server before it serves.
 *
 * @module
 */
export { type ContextResult, createServerContext } from "./context.ts";
export type { ServerContext } from "../context/mod.ts";
export { CallRegistry, requestKey } from "./calls.ts";
export { type AcquireResult, ConcurrencyLimiter, type Release } from "../concurrency/mod.ts";
export { type CallerIdentity, type Scope, STDIO_CALLER } from "../tools/caller.ts";
export {
  POLICY_WATCH_INTERVAL_MS,
  type PolicyWatchTarget,
  watchPolicyFile,
} from "./policy_watch.ts";
