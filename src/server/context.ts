/**
 * Everything one server process shares across sessions: the frozen policy,
 * the audit log, the redactor, the executor and the concurrency limiter.
 * Built once at startup; any failure here stops the server before it serves.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { AuditLog } from "../audit/mod.ts";
import { createRedactor, redactArgv, type Redactor } from "../redact/mod.ts";
import { createExecutor, type Executor } from "../exec/mod.ts";
import { ConcurrencyLimiter } from "./limiter.ts";
import { policyHash } from "../policy_tools/identity.ts";
import { startSandboxEgress } from "./egress.ts";

export interface ServerContext {
  readonly policy: Policy;
  /** The frozen policy's identity (`sha256:...`), on every audit record and in describe_policy. */
  readonly policyHash: string;
  readonly audit: AuditLog;
  readonly redactor: Redactor;
  readonly executor: Executor;
  readonly limiter: ConcurrencyLimiter;
  /**
   * Registers a tool call in flight, so `close()` can wait for its outcome
   * record before closing the log.
   */
  track<T>(call: Promise<T>): Promise<T>;
  /** Kills running commands, waits for their outcome records, then closes the log. */
  close(reason: string): Promise<void>;
}

export type ContextResult =
  | { readonly ok: true; readonly context: ServerContext }
  | { readonly ok: false; readonly message: string };

/**
 * Builds the shared context for `policy`.
 *
 * @returns The context, or one sentence saying which part could not start.
 */
export async function createServerContext(policy: Policy): Promise<ContextResult> {
  const redactor = createRedactor(policy.redaction);
  const hash = await policyHash(policy);
  const opened = await AuditLog.open(policy.auditLog, policy.auditFailMode, {
    policyHash: hash,
    redact: redactor.redact,
    redactArgv: (argv) => redactArgv(redactor, argv),
    ...(policy.auditRotation === undefined ? {} : { rotation: policy.auditRotation }),
  });
  if (!opened.ok) return { ok: false, message: opened.reason };
  const audit = opened.log;
  // The egress proxy first: every sandbox, the startup probe's included,
  // binds its socket.
  const egress = await startSandboxEgress(policy, audit);
  if (!egress.ok) {
    await audit.close();
    return { ok: false, message: egress.message };
  }
  const built = await createExecutor(
    policy,
    egress.proxy === null ? {} : { egressSocket: egress.proxy.socketPath },
  );
  if (!built.ok) {
    await egress.proxy?.close();
    await audit.close();
    return { ok: false, message: built.message };
  }
  const executor = built.executor;
  if (egress.proxy !== null) {
    const handed = await egress.handTo(executor.describe());
    if (!handed.ok) {
      await executor.shutdown();
      await egress.proxy.close();
      await audit.close();
      return { ok: false, message: handed.message };
    }
  }
  const limiter = new ConcurrencyLimiter(policy.limits.maxConcurrent);
  const inflight = new Set<Promise<unknown>>();
  let closing: Promise<void> | null = null;
  const context: ServerContext = {
    policy,
    policyHash: hash,
    audit,
    redactor,
    executor,
    limiter,
    track(call) {
      inflight.add(call);
      const forget = () => inflight.delete(call);
      call.then(forget, forget);
      return call;
    },
    close(reason) {
      // Idempotent: stdin EOF and a signal may both ask to close.
      closing ??= (async () => {
        await executor.shutdown();
        await egress.proxy?.close();
        // Killed commands return through their tool calls, which write the
        // outcome records; only then may the log close.
        await Promise.allSettled([...inflight]);
        await audit.writeEvent("server_stop", { reason });
        await audit.close();
      })();
      return closing;
    },
  };
  return { ok: true, context: Object.freeze(context) };
}
