/**
 * `[log]` and `[telemetry]`: the operator's view of a running server.
 *
 * The OTLP endpoint is a place where data leaves this machine, so it is read
 * from the policy file only (never from `OTEL_EXPORTER_OTLP_ENDPOINT`): it is
 * then part of the reviewed, hashed policy, and the Deno net grant derived
 * from it is exactly the host:port written here. Plain `http` is accepted
 * only to a loopback collector; spans carry redacted command text, which must
 * not cross a network in the clear.
 *
 * @module
 */
import type { LogSettings, TelemetrySettings } from "./types.ts";
import type { PolicyFile } from "./schema.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";
import { isLoopbackHost } from "./loopback.ts";

/**
 * Defaults of the `[telemetry]` keys other than the endpoint, which has
 * none: the export is off until an operator names a collector.
 */
export const TELEMETRY_DEFAULTS: Readonly<
  Pick<TelemetrySettings, "serviceName" | "metricsIntervalMs">
> = Object.freeze({
  serviceName: "htmcp",
  metricsIntervalMs: 60_000,
});

/** `[log]`, or undefined when the table is absent (text, info). */
export function buildLogSettings(file: PolicyFile): LogSettings | undefined {
  if (file.log === undefined) return undefined;
  return { format: file.log.format ?? "text", level: file.log.level ?? "info" };
}

/** `[telemetry]`, or undefined when the table is absent (off). */
export function buildTelemetrySettings(
  file: PolicyFile,
): Checked<TelemetrySettings | undefined> {
  const table = file.telemetry;
  if (table === undefined) return pass(undefined);
  const endpoint = checkOtlpEndpoint(table.otlp_endpoint);
  if (!endpoint.ok) return endpoint;
  return pass({
    otlpEndpoint: endpoint.value,
    serviceName: table.service_name ?? TELEMETRY_DEFAULTS.serviceName,
    metricsIntervalMs: table.metrics_interval_ms ?? TELEMETRY_DEFAULTS.metricsIntervalMs,
  });
}

/**
 * Validates an OTLP/HTTP base URL and returns it without a trailing slash.
 *
 * The loader calls it for `[telemetry] otlp_endpoint`; it is public so the
 * rule (http(s) only, no credentials, query or fragment, plain http only to
 * loopback) has one home that tests and tools can ask directly.
 *
 * @param text The `otlp_endpoint` value.
 * @returns The normalized URL, or one sentence naming the key.
 *
 * @example
 * ```ts
 * import { checkOtlpEndpoint } from "./observability.ts";
 * checkOtlpEndpoint("http://127.0.0.1:4318/"); // { ok: true, value: "http://127.0.0.1:4318" }
 * checkOtlpEndpoint("http://collector.example:4318").ok; // false: plain http off loopback
 * ```
 */
export function checkOtlpEndpoint(text: string): Checked<string> {
  const key = 'Policy key "telemetry.otlp_endpoint"';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail(
      `${key} must be an http(s) URL such as "http://127.0.0.1:4318", got ${quote(text)}.`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return fail(`${key} must use http or https, got ${quote(text)}.`);
  }
  // Credentials in the URL would be written to logs and `htmcp check` output.
  if (url.username !== "" || url.password !== "") {
    return fail(`${key} must not carry a user name or password, got a URL with credentials.`);
  }
  if (url.search !== "" || url.hash !== "") {
    return fail(`${key} must not have a query or fragment, got ${quote(text)}.`);
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return fail(
      `${key} uses plain http to ${
        quote(url.hostname)
      }, which is not loopback; use https (spans carry command text, redacted but not for the network in the clear).`,
    );
  }
  return pass(`${url.origin}${url.pathname.replace(/\/+$/, "")}`);
}

/**
 * The `host:port` the exporter connects to, for the Deno net grant (Deno
 * compares host and port as text, so the port is always explicit).
 *
 * @param settings The loaded `[telemetry]` settings.
 * @returns `host:port`, with 80 or 443 filled in when the URL has no port.
 */
export function otlpNetGrant(settings: TelemetrySettings): string {
  const url = new URL(settings.otlpEndpoint);
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  return `${url.hostname}:${port}`;
}
