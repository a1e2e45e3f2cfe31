/**
 * MCP over Streamable HTTP: an accept loop of its own on `Deno.listen` that
 * bounds connections (`listener.ts`), request-size limits before any
 * parsing, Host/Origin checks against DNS rebinding, OAuth bearer
 * authentication and per-tool scopes (`src/auth/`), and one MCP session per
 * client conversation, bound to the client that opened it.
 *
 * Denies on failure: a request that is too large, foreign, unauthenticated,
 * out of scope or aimed at another client's session gets a refusal and never
 * reaches a tool.
 *
 * @module
 */
export {
  type HttpServerHandle,
  MCP_PATH,
  serveHttp,
  type ServeHttpOptions,
  type ServeHttpResult,
} from "./server.ts";
export { serveHttpUntilStopped } from "./run.ts";
export { DEFAULT_SESSION_LIMITS, type SessionLimits } from "./sessions.ts";
export type { ConnectionLimits, ListenerStats } from "./listener.ts";
export type { RefusalLedgerLimits } from "./refusal_ledger.ts";
export { type TooLargeBody } from "./body_limit.ts";
export {
  describeFdBudget,
  type FdBudget,
  fdBudget,
  type FdLimitSource,
  readFdLimit,
} from "./fd_budget.ts";
