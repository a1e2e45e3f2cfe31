/**
 * `[log]` and `[telemetry]` through the real loader: defaults, accepted
 * values, and every bad value refused with one sentence naming the key.
 */
import assert from "node:assert/strict";
import { assertLoaded, assertRefused, withScratch } from "../config/_fixture.ts";

const BASE = 'jail_root = "jail"\naudit_log = "audit.jsonl"\n[allowlist]\ncommands = ["ls"]\n';

Deno.test("a policy without [log] or [telemetry] has neither: text at info, no export", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(BASE));
    assert.equal(policy.log, undefined);
    assert.equal(policy.telemetry, undefined);
  });
});

Deno.test("[log] and [telemetry] load with their defaults filled in", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        `${BASE}[log]\nformat = "json"\n[telemetry]\notlp_endpoint = "http://127.0.0.1:4318/"\n`,
      ),
    );
    assert.deepEqual(policy.log, { format: "json", level: "info" });
    assert.deepEqual(policy.telemetry, {
      otlpEndpoint: "http://127.0.0.1:4318",
      serviceName: "htmcp",
      metricsIntervalMs: 60_000,
    });
    const remote = assertLoaded(
      await s.load(
        `${BASE}[telemetry]\notlp_endpoint = "https://otel.example.com/prefix"\nservice_name = "ci"\nmetrics_interval_ms = 5000\n`,
      ),
    );
    assert.deepEqual(remote.telemetry, {
      otlpEndpoint: "https://otel.example.com/prefix",
      serviceName: "ci",
      metricsIntervalMs: 5000,
    });
  });
});

Deno.test("bad [log] values are refused with the key named", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(`${BASE}[log]\nformat = "xml"\n`),
      'Policy key "log.format" must be "text" or "json", got "xml".',
    );
    assertRefused(
      await s.load(`${BASE}[log]\nlevel = "verbose"\n`),
      'Policy key "log.level" must be one of "debug", "info", "warn", "error", got "verbose".',
    );
    const unknown = await s.load(`${BASE}[log]\nfile = "/tmp/x"\n`);
    assert.ok(!unknown.ok && unknown.message.includes("log"), "unknown keys are refused");
  });
});

Deno.test("an OTLP endpoint that is not a safe http(s) URL is refused", async () => {
  await withScratch(async (s) => {
    const load = (endpoint: string) =>
      s.load(`${BASE}[telemetry]\notlp_endpoint = ${JSON.stringify(endpoint)}\n`);
    assertRefused(
      await load("127.0.0.1:4318"),
      'Policy key "telemetry.otlp_endpoint" must be an http(s) URL such as "http://127.0.0.1:4318", got "127.0.0.1:4318".',
    );
    assertRefused(
      await load("not a url"),
      'Policy key "telemetry.otlp_endpoint" must be an http(s) URL such as "http://127.0.0.1:4318", got "not a url".',
    );
    assertRefused(
      await load("ftp://127.0.0.1:4318"),
      'Policy key "telemetry.otlp_endpoint" must use http or https, got "ftp://127.0.0.1:4318".',
    );
    assertRefused(
      await load("http://collector.example.com:4318"),
      'Policy key "telemetry.otlp_endpoint" uses plain http to "collector.example.com", which is not loopback; use https (spans carry command text, redacted but not for the network in the clear).',
    );
    assertRefused(
      await load("https://user:pw@otel.example.com"),
      'Policy key "telemetry.otlp_endpoint" must not carry a user name or password, got a URL with credentials.',
    );
    assertRefused(
      await load("https://otel.example.com/?token=x"),
      'Policy key "telemetry.otlp_endpoint" must not have a query or fragment, got "https://otel.example.com/?token=x".',
    );
    assertRefused(
      await s.load(
        `${BASE}[telemetry]\notlp_endpoint = "http://127.0.0.1:4318"\nmetrics_interval_ms = 10\n`,
      ),
      'Policy key "telemetry.metrics_interval_ms" must be an integer from 1000 to 3600000, got 10.',
    );
    const missing = await s.load(`${BASE}[telemetry]\nservice_name = "x"\n`);
    assert.ok(!missing.ok && missing.message.includes("telemetry.otlp_endpoint"), String(missing));
  });
});
