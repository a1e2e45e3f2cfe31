/**
 * The server context's type: what the tools, the job manager and the
 * transports are handed. Types only; `createServerContext` in
 * `src/server/mod.ts` builds one.
 *
 * @module
 */
export type { ServerContext } from "./server_context.ts";
