/**
 * Progress text is redacted by the server's redactor and shows only whole
 * lines the redactor saw in full: a secret whose start fell out of the live
 * window, or a private key whose BEGIN line did, never shows.
 */
import { equal, ok } from "node:assert/strict";
import { LIVE_WINDOW_BYTES, LiveOutput, TAIL_BYTES } from "../../src/jobs/mod.ts";
import { createRedactor } from "../../src/redact/mod.ts";

const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
const encode = (text: string) => new TextEncoder().encode(text);
const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

Deno.test("LiveOutput.tail() redacts a secret in the last lines", () => {
  const live = new LiveOutput();
  live.push("stdout", encode(`build step 1\ntoken ${SECRET}\nstep 2\n`));
  const tail = live.tail("stdout", redactor);
  equal(tail.includes(SECRET), false);
  ok(tail.includes("[REDACTED:"), tail);
  ok(tail.endsWith("step 2"));
});

Deno.test("LiveOutput.tail() never shows a secret whose start left the live window", () => {
  const live = new LiveOutput();
  // The secret's prefix is pushed out of the window; its last characters
  // would start the window, unrecognisable, if the line were kept.
  const filler = "f".repeat(LIVE_WINDOW_BYTES - 20);
  live.push("stdout", encode(`token ${SECRET}` + filler + "\nlast line\n"));
  const tail = live.tail("stdout", redactor);
  equal(tail, "last line");
});

Deno.test("LiveOutput.tail() drops a private key's body whose BEGIN line left the window", () => {
  const live = new LiveOutput();
  const body = Array.from(
    { length: 400 },
    () => "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
  ).join("\n");
  live.push(
    "stdout",
    encode(`-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\nafter\n`),
  );
  const tail = live.tail("stdout", redactor);
  equal(tail, "after");
});

Deno.test("LiveOutput.message() is bounded whatever the output", () => {
  const live = new LiveOutput();
  live.push("stdout", encode("y".repeat(100_000)));
  live.push("stderr", encode("e\n".repeat(10_000)));
  const message = live.message(12_345, redactor);
  ok(encode(message).byteLength <= 2 * TAIL_BYTES + 200, String(encode(message).byteLength));
  ok(message.startsWith("running for 12 s; stdout 100000 bytes, stderr 20000 bytes"));
});
