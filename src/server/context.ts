/**
 * Builds the {@linkcode ServerContext} (`src/context/`): everything one
 * server process shares across sessions, opened in order (audit log, state
 * store, egress proxy, executor, limiter). Built once at startup; any
 * failure here stops the server before it serves.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { AuditLog } from "../audit/log.ts";
import type { CheckpointSettings } from "../audit/checkpoint_writer.ts";
import { loadOrCreateCheckpointKey } from "../audit/checkpoint_key.ts";
import { createRedactor, redactArgv } from "../redact/mod.ts";
import { createExecutor } from "../exec/mod.ts";
import { ConcurrencyLimiter } from "../concurrency/mod.ts";
import type { ServerContext } from "../context/mod.ts";
import { policyHash } from "../policy_tools/identity.ts";
import { currentTraceparent } from "../telemetry/call_scope.ts";
import { lineSink } from "../telemetry/log.ts";
import { telemetry } from "../telemetry/sink.ts";
import { closeStateStore, openStateStore, stateEnv } from "../state/mod.ts";
import { startSandboxEgress } from "./egress.ts";
import { auditAlwaysLoaded } from "../approvals/mod.ts";

/**
 * The context, or why the server must not start. A part that cannot start is
 * an expected outcome (a value): the CLI prints the sentence and exits.
 */
export type ContextResult =
  | { readonly ok: true; readonly context: ServerContext }
  | {
    readonly ok: false;
    /** One sentence naming the part that could not start (audit log, state store, egress, sandbox) and the fix. */
    readonly message: string;
  };

/**
 * Builds the shared context for `policy`, opening its parts in order: the
 * audit log (with its checkpoint key when checkpoints are on), the state
 * store, the egress proxy, the executor (whose probes decide the sandbox),
 * then the limiter. A part that fails closes the ones opened before it.
 *
 * @param policy The loaded, frozen policy.
 * @returns The context, or one sentence saying which part could not start.
 *
 * @example Build, serve, close
 * ```ts
 * import { loadPolicy } from "../config/mod.ts";
 * import { createServerContext } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/jail`);
 * await Deno.writeTextFile(`${dir}/policy.toml`, 'jail_root = "jail"\n');
 * const loaded = await loadPolicy({ policyFile: `${dir}/policy.toml`, env: {} });
 * if (!loaded.ok) throw new Error(loaded.message);
 * const built = await createServerContext(loaded.policy);
 * // Fails closed: no sandbox on this machine means no server, with the fix in the sentence.
 * if (!built.ok) throw new Error(built.message);
 * // ... serve stdio or HTTP sessions with built.context ...
 * await built.context.close("example done");
 * ```
 */
export async function createServerContext(policy: Policy): Promise<ContextResult> {
  const redactor = createRedactor(policy.redaction);
  const hash = await policyHash(policy);
  let checkpoints: CheckpointSettings | undefined;
  if (policy.auditCheckpoints !== undefined) {
    // Fail closed: an operator relying on checkpoints must not get a server
    // that silently writes none.
    const key = await loadOrCreateCheckpointKey(policy.stateDir!);
    if (!key.ok) return { ok: false, message: key.message };
    checkpoints = { ...policy.auditCheckpoints, key: key.key };
  }
  const opened = await AuditLog.open(policy.auditLog, policy.auditFailMode, {
    policyHash: hash,
    redact: redactor.redact,
    redactArgv: (argv) => redactArgv(redactor, argv),
    ...(policy.auditRotation === undefined ? {} : { rotation: policy.auditRotation }),
    ...(checkpoints === undefined ? {} : { checkpoints }),
    traceparent: currentTraceparent,
    warn: lineSink("audit_warning"),
  });
  if (!opened.ok) return { ok: false, message: opened.reason };
  const audit = opened.log;
  // Before anything serves: an unreachable store or a schema that is not
  // this build's stops the start with the sentence saying what to do.
  const state = await openStateStore(policy, stateEnv());
  if (!state.ok) {
    await audit.close();
    return { ok: false, message: state.message };
  }
  // The operator's always-allow rules are on record before any call they exempt.
  await auditAlwaysLoaded(audit, policy.approval);
  // The egress proxy first: every sandbox, the startup probe's included,
  // binds its socket.
  const egress = await startSandboxEgress(policy, audit);
  if (!egress.ok) {
    await closeStateStore(policy);
    await audit.close();
    return { ok: false, message: egress.message };
  }
  const built = await createExecutor(policy, {
    ...(egress.proxy === null ? {} : { egressSocket: egress.proxy.socketPath }),
  });
  if (!built.ok) {
    await egress.proxy?.close();
    await closeStateStore(policy);
    await audit.close();
    return { ok: false, message: built.message };
  }
  const executor = built.executor;
  if (egress.proxy !== null) {
    const handed = await egress.handTo(executor.describe());
    if (!handed.ok) {
      await executor.shutdown();
      await egress.proxy.close();
      await closeStateStore(policy);
      await audit.close();
      return { ok: false, message: handed.message };
    }
  }
  const limiter = new ConcurrencyLimiter(policy.limits.maxConcurrent, {
    max: policy.limits.queueMax,
    waitMs: policy.limits.queueWaitMs,
    // The queue serves run_command only; the histogram keeps the tool label.
    onWaited: (ms) => telemetry().queueWait(ms / 1000, "run_command"),
  });
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
        // Waiting calls are refused (and audited by their tool calls) rather
        // than started into a server that is going away.
        limiter.close();
        await executor.shutdown();
        await egress.proxy?.close();
        // Killed commands return through their tool calls, which write the
        // outcome records; only then may the log close.
        await Promise.allSettled([...inflight]);
        await audit.writeEvent("server_stop", { reason });
        await closeStateStore(policy);
        await audit.close();
      })();
      return closing;
    },
  };
  return { ok: true, context: Object.freeze(context) };
}
