/**
 * The process's telemetry export: off (a no-op) unless the policy has a
 * `[telemetry]` table. The OpenTelemetry SDK is imported only when it is on,
 * so a server without telemetry loads none of it and pays nothing per call
 * beyond one function call into the no-op.
 *
 * @module
 */
import type { TelemetrySettings } from "../config/types.ts";
import type { TelemetrySink, TelemetrySources } from "./sink_types.ts";
export type { TelemetrySink, TelemetrySources };

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

/**
 * The process's telemetry sink (the no-op unless `startTelemetry` turned it on).
 *
 * @returns The sink in force now; ask again rather than keeping it, since
 *   start and stop replace it.
 */
export function telemetry(): TelemetrySink {
  return current;
}

/**
 * Turns the export on for `settings`, or leaves it off.
 *
 * @param settings `policy.telemetry`; undefined leaves telemetry off and imports nothing.
 * @param sources Live values the metrics observe.
 * @returns The sink now in force.
 *
 * @example
 * ```ts
 * import type { Policy } from "../config/types.ts";
 * import { startTelemetry, stopTelemetry } from "./sink.ts";
 * declare const policy: Policy;
 * const sink = await startTelemetry(policy.telemetry, { running: () => 0 });
 * sink.enabled; // false unless [telemetry] names a collector
 * await stopTelemetry(); // at shutdown: flushes what is pending
 * ```
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
