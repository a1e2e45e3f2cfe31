/**
 * The shape of what one server process shares across sessions, apart from
 * how it is built (`createServerContext` in `src/server/`), so the tools and
 * the job manager can name it without importing the layer that serves them.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import type { AuditLog } from "../audit/mod.ts";
import type { Redactor } from "../redact/mod.ts";
import type { Executor } from "../exec/mod.ts";
import type { ConcurrencyLimiter } from "../concurrency/mod.ts";

/**
 * Everything one server process shares across sessions: the frozen policy,
 * the audit log, the redactor, the executor and the concurrency limiter.
 * Built once at startup and frozen.
 */
export interface ServerContext {
  /** The policy loaded at startup; later edits of the file are reported, never applied. */
  readonly policy: Policy;
  /** The frozen policy's identity (`sha256:...`), on every audit record and in describe_policy. */
  readonly policyHash: string;
  /** The one audit log of the process; every attempt is written here before it runs. */
  readonly audit: AuditLog;
  /** The redactor built from `[redaction]`, applied to output and audited arguments. */
  readonly redactor: Redactor;
  /** Runs checked commands inside the containment probed at startup. */
  readonly executor: Executor;
  /** The concurrency caps and the fair queue every `run_command` goes through. */
  readonly limiter: ConcurrencyLimiter;
  /**
   * Registers a tool call in flight, so `close()` can wait for its outcome
   * record before closing the log.
   */
  track<T>(call: Promise<T>): Promise<T>;
  /** Kills running commands, waits for their outcome records, then closes the log. */
  close(reason: string): Promise<void>;
}
