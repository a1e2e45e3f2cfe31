/**
 * Redaction in slices: the same result as the synchronous redactor, with
 * findings that straddle a slice boundary kept whole, and the event loop
 * served between slices while a large output is redacted.
 */
import assert from "node:assert/strict";
import { fakePrivateKey, realisticOutput } from "../../bench/redact_throughput.ts";
import {
  redactAndTruncate,
  redactAndTruncateInSlices,
  redactInSlices,
  type Redactor,
} from "../../src/redact/mod.ts";
import { FAKE, makeRedactor, pemBlock } from "./_redactor.ts";

const redactors = [makeRedactor(), makeRedactor({ entropyFallback: true })];

function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const PIECES: readonly string[] = [
  ...Object.values(FAKE),
  pemBlock(),
  fakePrivateKey(),
  "password=",
  "token: ",
  "Authorization: Bearer ",
  "postgres://u:",
  "@db/x",
  "keys/id:12:",
  "\x1b[01;31m\x1b[K",
  "\x1b[m\x1b[K",
  "the quick brown fox",
  "-----BEGIN PRIVATE KEY-----",
  "-----END PRIVATE KEY-----",
];
const GLUE: readonly string[] = [" ", "\n", "=", ":", '"', "", "\t", "\n\n"];

async function assertSameAsSync(
  redactor: Redactor,
  text: string,
  sliceChars: number,
  what: string,
) {
  const expected = redactor.redactWithSpans(text);
  const actual = await redactInSlices(redactor, text, { sliceChars });
  if (actual.text !== expected.text) {
    let i = 0;
    while (actual.text[i] === expected.text[i]) i++;
    assert.fail(
      `${what}, slices of ${sliceChars}: first difference at ${i}: ` +
        `${JSON.stringify(actual.text.slice(i - 20, i + 60))} vs ` +
        `${JSON.stringify(expected.text.slice(i - 20, i + 60))}`,
    );
  }
  assert.deepEqual(actual.spans, expected.spans, what);
}

Deno.test("redactInSlices() equals redactWithSpans() on 150 random mixtures, in slices of 7 to 300", async () => {
  for (let seed = 1; seed <= 150; seed++) {
    const random = rng(seed);
    let text = "";
    const count = 5 + Math.floor(random() * 40);
    for (let i = 0; i < count; i++) {
      text += PIECES[Math.floor(random() * PIECES.length)]! +
        GLUE[Math.floor(random() * GLUE.length)]!;
    }
    const slice = 7 + Math.floor(random() * 293);
    for (const redactor of redactors) await assertSameAsSync(redactor, text, slice, `seed ${seed}`);
  }
});

Deno.test("redactInSlices() hides a secret placed across every slice boundary of a large output", async () => {
  // Secrets straddle each 64 KiB boundary, the default slice size.
  const base = realisticOutput(640 * 1024);
  let text = "";
  const slice = 64 * 1024;
  for (let at = 0; at < base.length; at += slice) {
    text += base.slice(at, at + slice - 20) + ` ${FAKE.githubClassic} ${FAKE.awsAccessKeyId}\n`;
  }
  const redactor = redactors[1]!;
  await assertSameAsSync(redactor, text, slice, "secrets on boundaries");
  const out = (await redactInSlices(redactor, text)).text;
  assert.ok(!out.includes(FAKE.githubClassic.slice(0, 12)));
  assert.ok(!out.includes(FAKE.awsAccessKeyId));
});

Deno.test("redactInSlices() hides a PEM block and a value longer than one window whole", async () => {
  const body = Array.from({ length: 4000 }, (_, i) => `${FAKE.azureKey.slice(0, 60)}${i % 10}A`);
  const block = ["-----BEGIN PRIVATE KEY-----", ...body, "-----END PRIVATE KEY-----"].join("\n");
  const longValue = "password: " + "x7Y".repeat(100_000);
  const text = `before\n${block}\nbetween\n${longValue}\nafter\n`;
  for (const redactor of redactors) await assertSameAsSync(redactor, text, 16 * 1024, "long spans");
  const out = (await redactInSlices(redactors[0]!, text, { sliceChars: 16 * 1024 })).text;
  assert.equal(
    out,
    "before\n[REDACTED:private_key]\nbetween\npassword: [REDACTED:secret_assignment]\nafter\n",
  );
});

Deno.test("redactAndTruncateInSlices() cuts like redactAndTruncate()", async () => {
  const redactor = redactors[1]!;
  const text = realisticOutput(300 * 1024) + FAKE.githubClassic + "\n";
  for (const [limit, cut] of [[1000, false], [200 * 1024, true], [400 * 1024, false]] as const) {
    const expected = redactAndTruncate(redactor, text, limit, cut);
    const actual = await redactAndTruncateInSlices(redactor, text, limit, cut, {
      sliceChars: 4096,
    });
    assert.deepEqual(actual, expected, `limit ${limit}`);
  }
  await assert.rejects(() => redactAndTruncateInSlices(redactor, text, -1, false), RangeError);
  await assert.rejects(() => redactInSlices(redactor, text, { sliceChars: 0 }), RangeError);
});

/** 4 MiB of dense `key=value` output, every value a secret: the slowest ordinary input. */
function denseAssignments(bytes: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const line = `password=hunter${i} token=t${i}x api_key=k${i}y secret: s${i}z\n`;
    parts.push(line);
    length += line.length;
  }
  return parts.join("");
}

/**
 * Counts event-loop turns while `work` runs: a zero timer that re-arms
 * itself, and the longest gap between two of its runs.
 */
async function turnsDuring(
  work: () => Promise<unknown>,
): Promise<{ turns: number; maxGapMs: number }> {
  let turns = 0;
  let maxGapMs = 0;
  let last = performance.now();
  let running = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    turns++;
    if (running) timer = setTimeout(tick, 0);
  };
  timer = setTimeout(tick, 0);
  last = performance.now();
  try {
    await work();
  } finally {
    running = false;
    clearTimeout(timer);
  }
  return { turns, maxGapMs };
}

Deno.test("redactInSlices() lets timers and another redaction run while 4 MiB of key=value is redacted", async () => {
  const redactor = redactors[0]!;
  const big = denseAssignments(4 * 1024 * 1024);
  const started = performance.now();
  let otherDoneAt = -1;
  let bigDoneAt = -1;
  const { turns, maxGapMs } = await turnsDuring(async () => {
    const bigCall = redactInSlices(redactor, big).then((r) => {
      bigDoneAt = performance.now();
      return r;
    });
    // Another client's small output, submitted while the big one runs.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const other = await redactInSlices(redactor, `token=${FAKE.githubClassic}\n`);
    otherDoneAt = performance.now();
    assert.equal(other.text, "token=[REDACTED:github_token]\n");
    const result = await bigCall;
    assert.ok(!result.text.includes("hunter1234"), "the big output was redacted");
  });
  const total = bigDoneAt - started;
  console.log(
    `4 MiB dense key=value in slices: ${total.toFixed(0)} ms, ${turns} timer turns, ` +
      `longest gap ${maxGapMs.toFixed(1)} ms, other call served after ${
        (otherDoneAt - started).toFixed(1)
      } ms`,
  );
  // Counted turns, not a wall-clock bound: on a loaded machine the longest
  // gap (printed above) measures the scheduler as much as the redactor.
  assert.ok(turns > 10, `only ${turns} event-loop turns while redacting`);
  assert.ok(otherDoneAt < bigDoneAt, "the small call waited for the big one");
});

Deno.test("redactWithSpans() on the same input holds the event loop (the contrast the sliced call removes)", async () => {
  const redactor = redactors[0]!;
  const big = denseAssignments(1024 * 1024);
  const { turns } = await turnsDuring(() => Promise.resolve(redactor.redactWithSpans(big)));
  assert.equal(turns, 0);
});

Deno.test("the executor's sliced rendering equals its synchronous rendering, cap and marker included", async () => {
  const { renderWithRedactor, renderWithRedactorInSlices } = await import(
    "../../src/exec/output.ts"
  );
  const redactor = redactors[1]!;
  const text = realisticOutput(200 * 1024) + `key ${FAKE.githubClassic}\n` + "tail\n".repeat(5000);
  const bytes = new TextEncoder().encode(text);
  const cases: readonly (readonly [number, number])[] = [
    [1024, bytes.length],
    [150 * 1024, bytes.length + 9999],
    [1 << 20, bytes.length],
  ];
  for (const [cap, total] of cases) {
    assert.deepEqual(
      await renderWithRedactorInSlices(bytes, total, cap, redactor),
      renderWithRedactor(bytes, total, cap, redactor),
      `cap ${cap}`,
    );
  }
});
