/**
 * The MCP server surface: shared context, per-session server, limiter.
 *
 * @module
 */
export { type ContextResult, createServerContext } from "./context.ts";
export type { ServerContext } from "../context/mod.ts";
export { createMcpServer } from "./mcp_server.ts";
export { CallRegistry, requestKey } from "./calls.ts";
export { type AcquireResult, ConcurrencyLimiter, type Release } from "../concurrency/mod.ts";
export { type CallerIdentity, type Scope, STDIO_CALLER } from "../tools/caller.ts";
export { runCommandTool } from "../tools/run_command.ts";
export { explainCommandTool } from "../tools/explain_command.ts";
export { describePolicy } from "../tools/describe_policy.ts";
export { POLICY_WATCH_INTERVAL_MS, watchPolicyFile } from "./policy_watch.ts";
