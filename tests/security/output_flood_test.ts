/**
 * A command that floods its output cannot exhaust the server's memory: the
 * executor keeps the first max_output_bytes (+ a redaction lookahead) of each
 * stream, counts the rest and throws it away while the pipe keeps draining.
 */
import assert from "node:assert/strict";
import { OUTPUT_LOOKAHEAD_BYTES } from "../../src/exec/mod.ts";
import { setup } from "../exec/_fixtures.ts";
import { assertSandboxMode } from "../_helpers/jail.ts";

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] an endless 'yes' is cut at the cap, counted, and ended by the timeout`, async () => {
    const cap = 64 * 1024;
    const s = await setup({ mode, limits: { maxOutputBytes: cap, timeoutMs: 700 } });
    try {
      await assertSandboxMode(s.executor, mode);
      const before = Deno.memoryUsage().rss;
      const out = await s.run("yes", ["flood"]);
      const grown = Deno.memoryUsage().rss - before;
      assert.equal(out.code, "TIMEOUT");
      assert.equal(out.truncated, true);
      // Far more was produced than kept...
      assert.ok(out.stdoutBytes > 20 * (cap + OUTPUT_LOOKAHEAD_BYTES), String(out.stdoutBytes));
      // ...yet the reply holds only the cap plus the marker.
      assert.ok(new TextEncoder().encode(out.stdout).byteLength <= cap + 200);
      assert.match(out.stdout, /bytes dropped\]$/);
      // RSS also reflects garbage not yet collected (every 64 KiB chunk is read, then
      // dropped), so only a large flood separates "bounded" from "kept everything".
      if (out.stdoutBytes >= 64 * 1024 * 1024) {
        assert.ok(grown < out.stdoutBytes / 2, `rss grew ${grown} for ${out.stdoutBytes} bytes`);
      }
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] a flood on stderr is capped the same way while stdout stays whole`, async () => {
    const cap = 4096;
    const s = await setup({ mode, limits: { maxOutputBytes: cap, timeoutMs: 5_000 } });
    try {
      await assertSandboxMode(s.executor, mode);
      const out = await s.run("sh", ["-c", "echo ok; head -c 3000000 /dev/zero >&2"]);
      assert.equal(out.code, "OUTPUT_TRUNCATED");
      assert.equal(out.exitCode, 0);
      assert.equal(out.stdout, "ok\n");
      assert.equal(out.stderrBytes, 3_000_000);
      assert.match(out.stderr, /2995904 of 3000000 bytes dropped/);
    } finally {
      await s.close();
    }
  });
}
