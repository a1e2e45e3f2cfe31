/**
 * The seam between the instrumented server and an exporter: what a call
 * hands over, and what the exporter may read back (gauges).
 *
 * @module
 */
import type { CallRecord } from "./call_record.ts";

/** What the rest of the server reports to the export. */
export interface TelemetrySink {
  /** Whether anything is exported (the no-op says false). */
  readonly enabled: boolean;
  /** A call began (the in-flight count by tool). */
  callStarted(tool: string): void;
  /**
   * A call ended: its span (a child of the client's trace when it sent one)
   * and its metrics.
   *
   * @returns The exported span's trace id, or null when none was recorded.
   */
  callEnded(record: CallRecord): string | null;
  /** Time a call waited for a slot before it could run, in seconds. */
  queueWait(seconds: number, tool: string): void;
  /** Flushes and stops the exporters (bounded in time). */
  shutdown(): Promise<void>;
}

/** What the export may read from the running server. */
export interface TelemetrySources {
  /** Commands running now (the concurrency limiter's held slots). */
  readonly running: () => number;
}
