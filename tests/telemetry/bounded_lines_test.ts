/**
 * The operator log's stderr queue: never blocks the caller, keeps at most its
 * bound, counts what it drops and says so once the reader caught up.
 */
import { deepEqual, equal } from "node:assert/strict";
import { BoundedLines } from "../../src/telemetry/bounded_lines.ts";
import type { ByteSink } from "../../src/streams/mod.ts";

/** An output whose writes wait until `release()`, like a pipe nobody reads. */
function stalledOutput() {
  const written: string[] = [];
  let open = Promise.withResolvers<void>();
  const output: ByteSink = {
    async write(bytes) {
      await open.promise;
      written.push(new TextDecoder().decode(bytes));
      return bytes.byteLength;
    },
  };
  return {
    output,
    written,
    release: () => open.resolve(),
    stall: () => open = Promise.withResolvers<void>(),
  };
}

const notice = (count: number) => `dropped ${count}`;

Deno.test("lines beyond the bound are dropped while the reader is stalled, then counted in one notice", async () => {
  const out = stalledOutput();
  // "line N\n" is 7 bytes: the first line is taken by the stalled write at
  // once, then 3 more fit within 21 bytes; the rest are dropped.
  const lines = new BoundedLines(out.output, 28, notice);
  for (let n = 1; n <= 9; n++) lines.write(`line ${n}`);
  equal(lines.dropped, 5);
  out.release();
  await lines.flush(1_000);
  deepEqual(out.written.join("").split("\n").filter(Boolean), [
    "line 1",
    "line 2",
    "line 3",
    "line 4",
    "dropped 5",
  ]);
  equal(lines.dropped, 0);
});

Deno.test("nothing is dropped and no notice is written while the reader keeps up", async () => {
  const out = stalledOutput();
  out.release();
  const lines = new BoundedLines(out.output, 1_000, notice);
  for (let n = 1; n <= 50; n++) {
    lines.write(`line ${n}`);
    await lines.flush(1_000);
  }
  equal(out.written.join("").split("\n").filter(Boolean).length, 50);
  equal(out.written.join("").includes("dropped"), false);
});

Deno.test("flush returns after its bound when the reader never reads", async () => {
  const out = stalledOutput();
  const lines = new BoundedLines(out.output, 1_000, notice);
  lines.write("stuck");
  const t0 = performance.now();
  await lines.flush(50);
  equal(out.written.length, 0);
  equal(performance.now() - t0 < 5_000, true);
  out.release(); // lets the pending write settle before the test ends
  await lines.flush(1_000);
});

Deno.test("a failed write (stderr closed) ends the queue: later lines are not written", async () => {
  let writes = 0;
  const lines = new BoundedLines(
    {
      write() {
        writes++;
        return Promise.reject(new Error("broken pipe"));
      },
    },
    1_000,
    notice,
  );
  lines.write("first");
  await lines.flush(1_000);
  lines.write("second");
  await lines.flush(1_000);
  equal(writes, 1);
});
