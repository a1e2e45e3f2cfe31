/**
 * The OpenTelemetry export (OTLP/HTTP, JSON), built with the official
 * OpenTelemetry JS SDK. Imported only when `[telemetry]` is set.
 *
 * Names follow the OpenTelemetry semantic conventions for MCP: a span per
 * tool call named `{mcp.method.name} {gen_ai.tool.name}` (`tools/call
 * run_command`), of kind SERVER, with `error.type` on every refused or failed
 * call and the span status ERROR, so a refusal never looks healthy; the
 * duration histogram is `mcp.server.operation.duration` in seconds. htmcp's
 * own attributes and metrics are under `htmcp.`.
 *
 * What is exported is a `CallRecord`: codes, counts, ids, the duration and
 * the redacted arguments. Command output is never handed to this module.
 *
 * The exporters are assembled from the SDK's fetch-based OTLP delegate and
 * JSON serializers, configured in code only. The packaged Node exporters
 * read `OTEL_EXPORTER_OTLP_*` variables (headers, endpoints, certificate
 * files) at construction; under the generated permission set those reads
 * are refused, and the policy, not the environment, says where data goes.
 *
 * Bounded: spans queue at most 2048 (then are dropped, never buffered without
 * end), each export gives up after 5 s, and shutdown waits at most 5 s.
 *
 * @module
 */
import {
  type Attributes,
  defaultTextMapGetter,
  diag,
  type DiagLogger,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { createLegacyOtlpBrowserExportDelegate } from "@opentelemetry/otlp-exporter-base/browser-http";
import {
  JsonMetricsSerializer,
  JsonTraceSerializer,
  MetricsExporterMetricsHelper,
  TraceExporterMetricsHelper,
} from "@opentelemetry/otlp-transformer";
import {
  AggregationTemporalityPreference,
  OTLPMetricExporterBase,
} from "@opentelemetry/exporter-metrics-otlp-http";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import type { TelemetrySettings } from "../config/types.ts";
import { VERSION } from "../version.ts";
import type { CallRecord } from "./call_record.ts";
import { operatorLog } from "./log.ts";
import { after, type Timer } from "../timers/mod.ts";
import type { TelemetrySink, TelemetrySources } from "./sink_types.ts";

const EXPORT_TIMEOUT_MS = 5_000;
const SHUTDOWN_TIMEOUT_MS = 5_000;
const SCOPE = "htmcp";

/** The MCP semconv's advised boundaries for operation durations, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/**
 * Starts the tracer and meter providers with their OTLP/HTTP exporters.
 *
 * @param settings The `[telemetry]` table.
 * @param sources Live values the gauges observe.
 * @returns The sink.
 */
export function startOtelExport(
  settings: TelemetrySettings,
  sources: TelemetrySources,
): TelemetrySink {
  diag.setLogger(exportFailureLogger(settings.otlpEndpoint), DiagLogLevel.WARN);
  const resource = resourceFromAttributes({
    "service.name": settings.serviceName,
    "service.version": VERSION,
  });
  const tracerProvider = new TracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: traceExporter(settings.otlpEndpoint),
        maxQueueSize: 2048,
        scheduledDelayMillis: 1_000,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: metricExporter(settings.otlpEndpoint),
        exportIntervalMillis: settings.metricsIntervalMs,
        exportTimeoutMillis: Math.min(EXPORT_TIMEOUT_MS, settings.metricsIntervalMs),
      }),
    ],
  });
  const tracer = tracerProvider.getTracer(SCOPE, VERSION);
  const meter = meterProvider.getMeter(SCOPE, VERSION);
  const propagator = new W3CTraceContextPropagator();

  const calls = meter.createCounter("htmcp.tool.calls", {
    description: "Tool calls, by tool, result code and verdict (ok, refused, failed).",
    unit: "{call}",
  });
  const refusals = meter.createCounter("htmcp.tool.refusals", {
    description: "Tool calls refused before anything ran, by tool and result code.",
    unit: "{call}",
  });
  const duration = meter.createHistogram("mcp.server.operation.duration", {
    description: "Duration of MCP tool calls as the server saw them.",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const queueWait = meter.createHistogram("htmcp.queue.wait_duration", {
    description: "Time a call waited for a concurrency slot before it could run.",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const active = meter.createUpDownCounter("htmcp.tool.calls.active", {
    description: "Tool calls in progress, by tool.",
    unit: "{call}",
  });
  const running = meter.createObservableGauge("htmcp.commands.running", {
    description: "Commands holding a concurrency slot (checking or running) now.",
    unit: "{command}",
  });
  running.addCallback((result) => result.observe(sources.running()));

  return Object.freeze({
    enabled: true,
    callStarted(tool: string) {
      active.add(1, { "gen_ai.tool.name": tool });
    },
    callEnded(record: CallRecord): string | null {
      active.add(-1, { "gen_ai.tool.name": record.tool });
      const toolAttributes: Attributes = {
        "gen_ai.tool.name": record.tool,
        "htmcp.result_code": record.code,
      };
      calls.add(1, { ...toolAttributes, "htmcp.verdict": record.verdict });
      if (record.verdict === "refused") refusals.add(1, toolAttributes);
      duration.record(record.durationMs / 1000, {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": record.tool,
        ...(record.errorType === null ? {} : { "error.type": record.errorType }),
      });

      const parent = record.trace === null ? ROOT_CONTEXT : propagator.extract(
        ROOT_CONTEXT,
        {
          traceparent: record.trace.traceparent,
          ...(record.trace.tracestate === null ? {} : { tracestate: record.trace.tracestate }),
        },
        defaultTextMapGetter,
      );
      const span = tracer.startSpan(`tools/call ${record.tool}`, {
        kind: SpanKind.SERVER,
        startTime: record.startedAt,
        attributes: spanAttributes(record),
      }, parent);
      if (record.errorType !== null) {
        // The code only: a reason sentence may quote the command.
        span.setStatus({ code: SpanStatusCode.ERROR, message: record.code });
      }
      span.end(record.startedAt + record.durationMs);
      const context = span.spanContext();
      return (context.traceFlags & TraceFlags.SAMPLED) !== 0 ? context.traceId : null;
    },
    queueWait(seconds: number, tool: string) {
      queueWait.record(seconds, { "gen_ai.tool.name": tool });
    },
    async shutdown() {
      const done = Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
      let timer: Timer | undefined;
      const late = new Promise<void>((resolve) => {
        timer = after(SHUTDOWN_TIMEOUT_MS, resolve);
      });
      await Promise.race([done, late]);
      timer?.cancel();
      diag.disable();
    },
  });
}

/** OTLP/HTTP JSON span exporter to `${endpoint}/v1/traces`, configured in code only. */
function traceExporter(endpoint: string): SpanExporter {
  const delegate = createLegacyOtlpBrowserExportDelegate(
    { url: `${endpoint}/v1/traces`, timeoutMillis: EXPORT_TIMEOUT_MS },
    JsonTraceSerializer,
    "otlp_http_span_exporter",
    TraceExporterMetricsHelper,
    undefined,
    "v1/traces",
    { "Content-Type": "application/json" },
  );
  return new OTLPExporterBase<ReadableSpan[]>(delegate);
}

/** OTLP/HTTP JSON metric exporter to `${endpoint}/v1/metrics`, cumulative temporality. */
function metricExporter(endpoint: string): OTLPMetricExporterBase {
  const delegate = createLegacyOtlpBrowserExportDelegate(
    { url: `${endpoint}/v1/metrics`, timeoutMillis: EXPORT_TIMEOUT_MS },
    JsonMetricsSerializer,
    "otlp_http_metric_exporter",
    MetricsExporterMetricsHelper,
    undefined,
    "v1/metrics",
    { "Content-Type": "application/json" },
  );
  return new OTLPMetricExporterBase(delegate, {
    temporalityPreference: AggregationTemporalityPreference.CUMULATIVE,
  });
}

function spanAttributes(record: CallRecord): Attributes {
  return {
    "mcp.method.name": "tools/call",
    "gen_ai.tool.name": record.tool,
    "gen_ai.operation.name": "execute_tool",
    "jsonrpc.request.id": record.requestId,
    "network.transport": record.transport === "stdio" ? "pipe" : "tcp",
    "htmcp.transport": record.transport,
    "htmcp.result_code": record.code,
    "htmcp.verdict": record.verdict,
    ...(record.sessionId === null ? {} : { "mcp.session.id": record.sessionId }),
    ...(record.clientId === null ? {} : { "htmcp.client_id": record.clientId }),
    ...(record.exitCode === null ? {} : { "htmcp.exit_code": record.exitCode }),
    ...(record.errorType === null ? {} : { "error.type": record.errorType }),
    ...(record.arguments === null ? {} : { "gen_ai.tool.call.arguments": record.arguments }),
  };
}

/**
 * The SDK reports failed exports through `diag`; an unreachable collector
 * must be visible to the operator, but not as a line per batch: at most one
 * warning a minute.
 */
function exportFailureLogger(endpoint: string): DiagLogger {
  let lastAt = -Infinity;
  const warn = (message: string) => {
    const now = performance.now();
    if (now - lastAt < 60_000) return;
    lastAt = now;
    operatorLog().write("warn", "telemetry_export_failed", `telemetry export: ${message}`, {
      endpoint,
    });
  };
  const quiet = () => {};
  return {
    error: (message: string) => warn(message),
    warn: (message: string) => warn(message),
    info: quiet,
    debug: quiet,
    verbose: quiet,
  };
}
