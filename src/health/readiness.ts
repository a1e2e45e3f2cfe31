/**
 * Readiness: whether this replica should be sent traffic. Each check is one
 * boolean; the report never carries a path, a URL, an error text or a
 * secret, because `/readyz` answers anyone who can reach the port (a load
 * balancer, a kubelet) without authentication.
 *
 * - `policy`: the policy this process serves was loaded and validated (a
 *   server without one never starts, so a running one reports true; an edit
 *   on disk is never applied live, so it does not change this);
 * - `audit`: the audit log can be opened for appending now (nothing is
 *   written: a probe per second must not grow the log);
 * - `sandbox`: the executor's startup probes all passed and the mode in
 *   force is the one configured;
 * - `store`: the state store answers (a PostgreSQL `SELECT 1`; the local
 *   state directory is writable); absent when the policy keeps no state;
 * - `jwks`: in external mode, the identity provider's key set can be fetched.
 *
 * The report is computed at most once per `cacheMs` and concurrent probes
 * share one computation, so no rate of probes can turn into a rate of
 * database queries or provider fetches.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import type { Executor, ExecutorDescription } from "../exec/mod.ts";
import { stateStoreFor } from "../state/mod.ts";

/**
 * What readiness reads of a server: its policy (the audit log and state
 * store to check) and its executor's startup description (the sandbox
 * probes). A server's whole context qualifies; nothing else of it is read.
 */
export interface ReadinessContext {
  /** The policy this process serves. */
  readonly policy: Policy;
  /** The executor whose startup probes and mode in force are reported. */
  readonly executor: Pick<Executor, "describe">;
}

/** The per-check booleans, and whether all of them hold. */
export interface ReadinessReport {
  /** True only when every check holds: `/readyz` answers 200 then, 503 otherwise. */
  readonly ready: boolean;
  /** Each check by name (`policy`, `audit`, `sandbox`, `store`, `jwks`), booleans only. */
  readonly checks: Readonly<Record<string, boolean>>;
}

/** How long one computed report is reused. */
export const READINESS_CACHE_MS = 1_000;

/** What `createReadiness` needs besides the server's context. */
export interface ReadinessOptions {
  /** In external mode, whether the provider's key set is reachable; null otherwise. */
  readonly jwks: (() => Promise<boolean>) | null;
  /** How long a computed report is reused; default `READINESS_CACHE_MS`. */
  readonly cacheMs?: number;
  /** Clock in milliseconds; default `Date.now` (tests pass their own). */
  readonly now?: () => number;
}

/**
 * Builds the readiness probe of one server.
 *
 * @param context The policy and the executor whose sandbox probes are reported.
 * @param options The provider key check, the cache time and the clock.
 * @returns A probe that resolves the current report, computed at most once per
 *   `cacheMs`; concurrent calls share one computation.
 *
 * @example
 * ```ts
 * import type { ServerContext } from "../context/mod.ts";
 * import { createReadiness } from "./readiness.ts";
 * import { jwksProbeFor } from "./jwks_probe.ts";
 * declare const context: ServerContext;
 * const readiness = createReadiness(context, { jwks: jwksProbeFor(context.policy) });
 * const report = await readiness();
 * report.ready; // false as soon as one check fails: /readyz answers 503
 * ```
 */
export function createReadiness(
  context: ReadinessContext,
  options: ReadinessOptions,
): () => Promise<ReadinessReport> {
  const cacheMs = options.cacheMs ?? READINESS_CACHE_MS;
  const now = options.now ?? Date.now;
  let last: { at: number; report: ReadinessReport } | null = null;
  let running: Promise<ReadinessReport> | null = null;
  return () => {
    if (last !== null && now() - last.at < cacheMs) return Promise.resolve(last.report);
    running ??= computeReadiness(context, options).then((report) => {
      last = { at: now(), report };
      running = null;
      return report;
    });
    return running;
  };
}

async function computeReadiness(
  context: ReadinessContext,
  options: ReadinessOptions,
): Promise<ReadinessReport> {
  const { policy } = context;
  const store = stateStoreFor(policy);
  const [audit, storeOk, jwks] = await Promise.all([
    auditWritable(policy.auditLog),
    store === null ? Promise.resolve(null) : store.ping(),
    options.jwks === null ? Promise.resolve(null) : options.jwks().catch(() => false),
  ]);
  const checks: Record<string, boolean> = {
    policy: true,
    audit,
    sandbox: sandboxHolds(context.executor.describe()),
  };
  if (storeOk !== null) checks.store = storeOk;
  if (jwks !== null) checks.jwks = jwks;
  return Object.freeze({
    ready: Object.values(checks).every((ok) => ok),
    checks: Object.freeze(checks),
  });
}

function sandboxHolds(description: ExecutorDescription): boolean {
  const wanted = description.requestedMode === "auto" ? "bwrap" : description.requestedMode;
  return description.mode === wanted && description.probes.every((probe) => probe.ok);
}

async function auditWritable(path: string): Promise<boolean> {
  try {
    // Append mode, zero bytes written: the same open the writer makes.
    const file = await Deno.open(path, { append: true });
    file.close();
    return true;
  } catch {
    return false;
  }
}
