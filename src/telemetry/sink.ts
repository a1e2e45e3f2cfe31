/**
 * The process's telemetry export: off (a no-op) unless the policy has a
 * `[telemetry]` table. The OpenTelemetry SDK is imported only when it is on,
 * so a server without telemetry loads none of it and pays nothing per call
 * beyond one function call into the no-op.
 *
 * @module
 */
import type { TelemetrySettings } from "../config/types.ts";
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

const NOOP: TelemetrySink = Object.freeze({
  enabled: false,
  callStarted() {},
  callEnded() {
    return null;
  },
  queueWait() {},
  shutdown: () => Promise.resolve(),
});

let current: TelemetrySink = NOOP;

/** The process's telemetry sink (the no-op unless `startTelemetry` turned it on). */
export function telemetry(): TelemetrySink {
  return current;
}

/**
 * Turns the export on for `settings`, or leaves it off.
 *
 * @param settings `policy.telemetry`; undefined leaves telemetry off and imports nothing.
 * @param sources Live values the metrics observe.
 * @returns The sink now in force.
 */
export async function startTelemetry(
  settings: TelemetrySettings | undefined,
  sources: TelemetrySources,
): Promise<TelemetrySink> {
  if (settings === undefined) return current;
  // Lazy on purpose: the SDK and its exporters are loaded only when on.
  const { startOtelExport } = await import("./otel.ts");
  current = startOtelExport(settings, sources);
  return current;
}

/** Flushes and stops the export, and goes back to the no-op. */
export async function stopTelemetry(): Promise<void> {
  const stopping = current;
  current = NOOP;
  await stopping.shutdown();
}
