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
import type { ServerContext } from "../context/mod.ts";
import type { CallRegistry } from "../server/calls.ts";
import type { CallerIdentity } from "../tools/caller.ts";
import { argumentsDigest, RequestStateSealer } from "./request_state.ts";
import { stateStoreFor } from "../state/mod.ts";
import { MODERN_ERA } from "../tools/caller.ts";
import { jobsFor } from "../jobs/mod.ts";

export { MODERN_ERA } from "../tools/caller.ts";

/** What the era needs from the rest of the server. */
export interface ModernEraDeps {
  /** The process's shared context: its policy keys the sealer, its audit log records refusals. */
  readonly context: ServerContext;
  /** The server's name and version, as the 2025 era announces them too. */
  readonly info: Implementation;
  /** The server's instructions to the model, the same in both eras. */
  readonly instructions: string;
  /** `createMcpServer`: the one definition of the tools. */
  readonly build: (caller: CallerIdentity, calls: CallRegistry) => McpServer;
  /**
   * True: the SDK v2 server code is loaded by `load()`, when the first
   * 2026 connection arrives, not at startup (stdio, where most clients
   * never speak that era and the SDK costs a large part of a cold start).
   */
  readonly deferLoad?: boolean;
}

/** The era's shared parts. */
export interface ModernEra {
  /** Seals and opens the single-use request states of this process's 2026 calls. */
  readonly sealer: RequestStateSealer;
  /** Loads the SDK v2 server code; `serverFor` needs it done (already so without `deferLoad`). */
  load(): Promise<void>;
  /**
   * A fresh 2026 server instance for `caller`.
   *
   * @throws Error before `load()` has resolved: a wiring bug.
   */
  serverFor(caller: CallerIdentity, calls: CallRegistry): Server;
}

/** The SDK v2 server code and the task runner that builds on it, loaded together. */
interface ModernServerModule {
  readonly server: typeof import("./modern_server.ts");
  readonly tasks: typeof import("./job_tasks.ts");
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
  let loaded: ModernServerModule | null = null;
  let loading: Promise<void> | null = null;
  const era: ModernEra = {
    sealer,
    load() {
      loading ??= Promise.all([import("./modern_server.ts"), import("./job_tasks.ts")]).then(
        ([server, tasks]) => {
          loaded = { server, tasks };
        },
      );
      return loading;
    },
    serverFor(caller, calls) {
      if (loaded === null) throw new Error("The 2026 era's server is used before load().");
      // A task is a job: without a job store there are no tasks to offer.
      const jobs = jobsFor(deps.context);
      const limits = deps.context.policy.limits;
      return loaded.server.createModernServer({
        ...(jobs === null ? {} : {
          tasks: loaded.tasks.jobTaskRunner({
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
        roundTrip: {
          seal: async (call, payload, ttlMs) =>
            await sealer.seal(
              {
                caller: stateCaller(caller),
                tool: call.name,
                argumentsDigest: await argumentsDigest(call.arguments),
                policyHash: deps.context.policyHash,
              },
              payload,
              ttlMs,
            ),
          refused: async (call, approvalId, reason) => {
            await deps.context.audit.writeEvent("input_response_refused", {
              protocol_era: MODERN_ERA,
              transport: caller.transport,
              client_id: caller.clientId,
              tool: call.name,
              approval_id: approvalId,
              reason,
            });
          },
        },
      });
    },
  };
  if (deps.deferLoad !== true) await era.load();
  return { ok: true, era };
}
