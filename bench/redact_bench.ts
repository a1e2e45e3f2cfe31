/**
 * `deno bench bench/redact_bench.ts`: redaction on 1 MiB outputs, all
 * detectors on. The target from the issue is at least 200 MB/s, i.e. at most
 * about 5.2 ms per MiB; `redact_throughput.ts` prints the figure directly.
 *
 * @module
 */
import { createRedactor, redactAndTruncate, redactInSlices } from "../src/redact/mod.ts";
import { benchRedactor, fakePrivateKey, MIB, realisticOutput } from "./redact_throughput.ts";

const redactor = benchRedactor();
const defaults = createRedactor({
  enabled: true,
  entropyFallback: false,
  extraPatterns: [],
});
const realistic = realisticOutput(MIB);
const hostile = "eyJ".repeat(Math.ceil(MIB / 3)).slice(0, MIB);
const allA = "A".repeat(MIB);
const colons = "password:x ".repeat(Math.ceil(MIB / 11)).slice(0, MIB);
// Renderings that need a match view: colour escapes on every line, a key
// behind `cat -n` numbers, and a key whose lines `sort` reordered (every
// line of the text is then read for key lines).
const colored = realistic.replaceAll(/^(\S+)/gm, "\x1b[01;34m\x1b[K$1\x1b[m\x1b[K");
const numberedKey = realistic +
  fakePrivateKey().split("\n").map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join("\n");
const sortedKey = realistic + fakePrivateKey().split("\n").sort().join("\n");
const unicode = new TextDecoder().decode(
  new TextEncoder().encode(realisticOutput(MIB / 2).replaceAll("root", "rööt✓")),
);

Deno.bench("redact 1 MiB realistic output, all detectors + entropy", { baseline: true }, () => {
  redactor.redact(realistic);
});
Deno.bench("redact 1 MiB realistic output, policy defaults (entropy off)", () => {
  defaults.redact(realistic);
});
Deno.bench("redact ~1 MiB output with non-ASCII text", () => {
  redactor.redact(unicode);
});
Deno.bench("redactAndTruncate 1 MiB + lookahead window to a 1 MiB cap", () => {
  redactAndTruncate(redactor, realistic, MIB - 4096, true);
});
Deno.bench("redact 1 MiB realistic output coloured on every line (two escape-free views)", () => {
  redactor.redact(colored);
});
Deno.bench("redact 1 MiB realistic output + a key behind `cat -n` numbers (line view)", () => {
  redactor.redact(numberedKey);
});
Deno.bench(
  "redact 1 MiB realistic output + a key whose lines were sorted (every line read)",
  () => {
    redactor.redact(sortedKey);
  },
);
Deno.bench("redact 1 MiB of eyJ (hostile)", () => {
  redactor.redact(hostile);
});
Deno.bench("redact 1 MiB of A (hostile)", () => {
  redactor.redact(allA);
});
Deno.bench("redact 1 MiB of password:x (every word a secret)", () => {
  redactor.redact(colons);
});

// The executor's path: the same redaction in 64 Ki slices, one per
// macrotask (each wait between slices is clamped to about 4 ms of idle time).
Deno.bench(
  "redactInSlices 1 MiB realistic output (16 slices, event loop served between)",
  async () => {
    await redactInSlices(redactor, realistic);
  },
);
