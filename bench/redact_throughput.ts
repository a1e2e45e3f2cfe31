/**
 * Redaction throughput on a realistic 1 MiB command output: `ls -la`
 * listings, log lines, JSON, source code, `env` output and a handful of real
 * looking secrets, with every detector on (entropy fallback included) and one
 * operator pattern. `deno task bench` prints the figure; `redact_bench.ts`
 * runs the same input under `Deno.bench`.
 *
 * @module
 */
import { createRedactor, type Redactor } from "../src/redact/mod.ts";

export const MIB = 1024 * 1024;

/** Ordinary output, one block repeated; each repetition gets a different serial number. */
function ordinaryBlock(serial: number): string {
  return [
    `drwxr-xr-x  5 root root  4096 Nov 29 09:15 .library`,
    `-rw-r--r--  1 root root  4805 Nov 29 09:15 helper-brief.md`,
    `-rw-r--r--  1 app  app  ${1000 + serial} Nov 29 09:16 password_reset_template.html`,
    `2024-11-29T09:15:${
      String(serial % 60).padStart(2, "0")
    }.123Z INFO  request id=550e8400-e29b-41d4-a716-446655440000 path=/api/v1/users status=200 duration_ms=12`,
    `2024-11-29T09:15:01.456Z DEBUG token refresh scheduled for user 4711 (expires in 3600 s)`,
    `commit 3f786850e387550fdab836ed7e6dc881de23001b`,
    `Author: Jane Developer <jane@example.com>`,
    `    Fix the tokenizer so max_tokens is honoured; see https://example.com/docs/auth#tokens`,
    `{"id": ${serial}, "name": "widget", "version": "1.2.3-beta.4", "tags": ["a", "b"], "enabled": true}`,
    `export function parseConfig(path: string): Config { return JSON.parse(Deno.readTextFileSync(path)); }`,
    `  const secretName = options.secretName ?? "default"; // looked up at runtime`,
    `PATH=/usr/local/bin:/usr/bin:/bin`,
    `HOME=/home/app`,
    `PWD=/srv/app/current`,
    `src/redact/assignment_detector.ts:42:  const keywords = new RegExp(KEYWORDS.source, "g");`,
    `sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  release.tar.gz`,
    `   Compiling serde_json v1.0.108`,
    `test policy::tokenize::quotes ... ok`,
    ``,
  ].join("\n");
}

/** Secrets sprinkled in, so the replacement path is measured too. */
const SECRETS = [
  `AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE`,
  `aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`,
  `GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345`,
  `Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U`,
  `DATABASE_URL=postgres://app:s3cr3t-passw0rd@db.internal:5432/app`,
  `{"password": "correct horse battery staple"}`,
  `ticket TICKET-SECRET-493021 escalated`,
  fakePrivateKey(),
];

/**
 * A whole PKCS#8 key as `cat` prints one: 64-wide base64 lines whose DER
 * header (1217 bytes) matches the body, so the redactor reads it as a key
 * in order. Not a real key: the body is seeded pseudo-random bytes.
 */
export function fakePrivateKey(seed = 11): string {
  const bytes = new Uint8Array(1194);
  let x = seed;
  for (let i = 0; i < bytes.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  const body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + btoa(String.fromCharCode(...bytes));
  const lines = body.match(/.{1,64}/g) ?? [];
  return ["-----BEGIN PRIVATE KEY-----", ...lines, "-----END PRIVATE KEY-----"].join("\n");
}

/**
 * Builds the benchmark input: `bytes` characters (ASCII) of mixed output,
 * round-tripped through UTF-8 the way the executor decodes a pipe, so the
 * string has the same flat representation a real call sees.
 */
export function realisticOutput(bytes = MIB): string {
  const parts: string[] = [];
  let length = 0;
  for (let serial = 0; length < bytes; serial++) {
    const block = ordinaryBlock(serial);
    parts.push(block);
    length += block.length;
    if (serial % 50 === 0) {
      const secret = SECRETS[(serial / 50) % SECRETS.length]! + "\n";
      parts.push(secret);
      length += secret.length;
    }
  }
  const text = parts.join("").slice(0, bytes);
  return new TextDecoder().decode(new TextEncoder().encode(text));
}

/** The redactor the benchmark measures: every detector on, one operator pattern. */
export function benchRedactor(): Redactor {
  return createRedactor({
    enabled: true,
    entropyFallback: true,
    extraPatterns: [{ name: "internal_ticket_secret", regex: /TICKET-SECRET-[0-9]{6}/gu }],
  });
}

export interface ThroughputReport {
  /** Megabytes (10^6 bytes) of input redacted per second, from the median wall-clock run. */
  readonly mbPerSecond: number;
  /** Same figure in MiB/s. */
  readonly mibPerSecond: number;
  /** MB/s from the fastest run: the figure on an otherwise idle machine. */
  readonly bestMbPerSecond: number;
  /** Median milliseconds to redact one input. */
  readonly medianMs: number;
  readonly inputBytes: number;
  readonly runs: number;
  /** Markers in one redacted output: proves the detectors actually fired. */
  readonly markers: number;
}

/**
 * Measures redaction throughput on `realisticOutput()` (1 MiB by default).
 *
 * @param runs timed runs after a warm-up; the median is reported
 * @returns the throughput figures
 */
export function measureRedactionThroughput(runs = 50, bytes = MIB): Promise<ThroughputReport> {
  const redactor = benchRedactor();
  const input = realisticOutput(bytes);
  let markers = 0;
  for (let i = 0; i < 5; i++) markers = redactor.redactWithSpans(input).spans.length;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const out = redactor.redact(input);
    // Reading one character flattens the result, as serializing it would.
    out.charCodeAt(out.length >> 1);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const medianMs = times[Math.floor(times.length / 2)] ?? NaN;
  const bestMs = times[0] ?? NaN;
  const mb = input.length / 1e6;
  return Promise.resolve({
    mbPerSecond: mb / (medianMs / 1000),
    mibPerSecond: input.length / MIB / (medianMs / 1000),
    bestMbPerSecond: mb / (bestMs / 1000),
    medianMs,
    inputBytes: input.length,
    runs,
    markers,
  });
}

/** One line for `deno task bench`. */
export function formatThroughput(report: ThroughputReport): string {
  return `redaction: ${report.mbPerSecond.toFixed(0)} MB/s median, ` +
    `${report.bestMbPerSecond.toFixed(0)} MB/s best ` +
    `(${report.medianMs.toFixed(2)} ms per ${report.inputBytes} bytes; ` +
    `${report.markers} secrets redacted; ${report.runs} runs; ` +
    `all detectors, entropy fallback and one operator pattern on)`;
}

if (import.meta.main) {
  console.log(formatThroughput(await measureRedactionThroughput()));
}
