/**
 * Starts the egress proxy for `[sandbox] network = "allowlist"` and, once
 * the executor has chosen who commands run as, hands the socket to that
 * uid (mode 0600): no other local user can use the proxy.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import type { AuditLog } from "../audit/mod.ts";
import type { ExecutorDescription } from "../exec/mod.ts";
import {
  type EgressProxy,
  egressSocketDir,
  listenOnFreeSlot,
  startEgressProxy,
} from "../egress/mod.ts";

type Started =
  | {
    readonly ok: true;
    readonly proxy: EgressProxy | null;
    handTo(
      executor: Pick<ExecutorDescription, "commandUid" | "commandGid" | "serverUid">,
    ): Promise<{ ok: true } | { ok: false; message: string }>;
  }
  | { readonly ok: false; readonly message: string };

/**
 * @param policy The loaded policy.
 * @param audit Where every connection is recorded.
 * @returns No proxy unless the policy asks for one; else the proxy, or why it could not start.
 */
export async function startSandboxEgress(
  policy: Policy,
  audit: Pick<AuditLog, "writeEvent">,
): Promise<Started> {
  if (policy.sandbox.network !== "allowlist" || policy.sandbox.mode === "none") {
    return { ok: true, proxy: null, handTo: () => Promise.resolve({ ok: true }) };
  }
  const slot = await listenOnFreeSlot(egressSocketDir(policy));
  if (!slot.ok) return slot;
  const started = startEgressProxy({
    listener: slot.listener,
    socketPath: slot.path,
    rules: policy.sandbox.networkAllow,
    audit,
    failMode: policy.auditFailMode,
  });
  if (!started.ok) return started;
  const proxy = started.proxy;
  return {
    ok: true,
    proxy,
    async handTo(executor) {
      if (executor.commandUid === executor.serverUid) return { ok: true };
      try {
        await Deno.chown(proxy.socketPath, executor.commandUid, executor.commandGid);
        return { ok: true };
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        return {
          ok: false,
          message:
            `Cannot start: the egress proxy's socket could not be handed to uid ${executor.commandUid}, who commands run as (${why}).`,
        };
      }
    },
  };
}
