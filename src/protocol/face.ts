/**
 * The 2026-07-28 era of one server process: the sealer of request states,
 * and the SDK v2 server instances (per HTTP request, per stdio connection)
 * that serve the same tools as `createMcpServer()` for a caller.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Implementation, Server } from "@modelcontextprotocol/server";
import "./_audit_events.ts";
import type { ServerContext } from "../server/context.ts";
import type { CallRegistry } from "../server/calls.ts";
import type { CallerIdentity } from "../tools/caller.ts";
import { createModernServer } from "./modern_server.ts";
import { argumentsDigest, RequestStateSealer } from "./request_state.ts";
import { stateStoreFor } from "../state/mod.ts";
import { jobsFor } from "../jobs/mod.ts";
import { jobTaskRunner } from "./job_tasks.ts";

/** The protocol revision of the stateless era, as audit records name it. */
export const MODERN_ERA = "2026-07-28";

/** What the era needs from the rest of the server. */
export interface ModernEraDeps {
  readonly context: ServerContext;
  readonly info: Implementation;
  readonly instructions: string;
  /** `createMcpServer`: the one definition of the tools. */
  readonly build: (caller: CallerIdentity, calls: CallRegistry) => McpServer;
}

/** The era's shared parts. */
export interface ModernEra {
  readonly sealer: RequestStateSealer;
  /** A fresh 2026 server instance for `caller`. */
  serverFor(caller: CallerIdentity, calls: CallRegistry): Server;
}

/** Who a request state is bound to. */
export function stateCaller(caller: CallerIdentity): string {
  return caller.clientId === null ? `${caller.transport}:operator` : `client:${caller.clientId}`;
}

/**
 * Builds the era for one process.
 *
 * @returns The era, or a sentence saying why its key could not be loaded.
 */
export async function createModernEra(
  deps: ModernEraDeps,
): Promise<{ ok: true; era: ModernEra } | { ok: false; message: string }> {
  // The policy's store, so every replica on a shared store opens (once) what any sealed.
  const keyed = await RequestStateSealer.forStore(
    stateStoreFor(deps.context.policy),
    deps.context.policy.stateDir,
  );
  if (!keyed.ok) return keyed;
  const sealer = keyed.sealer;
  const era: ModernEra = {
    sealer,
    serverFor(caller, calls) {
      // A task is a job: without a job store there are no tasks to offer.
      const jobs = jobsFor(deps.context);
      const limits = deps.context.policy.limits;
      return createModernServer({
        ...(jobs === null ? {} : {
          tasks: jobTaskRunner({
            jobs,
            caller,
            audit: deps.context.audit,
            retentionMs: limits.jobRetentionMs,
            inlineBytes: limits.inlineOutputBytes,
          }),
        }),
        info: deps.info,
        instructions: deps.instructions,
        build: () => deps.build(Object.freeze({ ...caller, protocolEra: MODERN_ERA }), calls),
        openState: async (state, call) => {
          const opened = await sealer.open(state, {
            caller: stateCaller(caller),
            tool: call.name,
            argumentsDigest: await argumentsDigest(call.arguments),
            policyHash: deps.context.policyHash,
          });
          if (!opened.ok) {
            await deps.context.audit.writeEvent("request_state_refused", {
              protocol_era: MODERN_ERA,
              transport: caller.transport,
              client_id: caller.clientId,
              tool: call.name,
              reason: opened.reason,
            });
          }
          return opened;
        },
      });
    },
  };
  return { ok: true, era };
}
