/**
 * `bench/call_cpu.ts` as the README runs it: a real server per mode, real
 * calls in flight, CPU read from /proc. Asserts the split is a measurement
 * (every row present, the reaped processes' CPU counted), never a speed.
 */
import { equal, ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";

const BENCH = fileURLToPath(new URL("../../bench/call_cpu.ts", import.meta.url));

Deno.test("bench/call_cpu.ts prints the floor and both modes, each with the CPU its reaped processes used", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH, "60", "4"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  equal(output.success, true, new TextDecoder().decode(output.stderr));
  const rows = text.split("\n").filter((line) => / ms \(.*\| .* ms \(/.test(line));
  equal(rows.length, 3, text);
  for (
    const [index, label] of ["bare spawn of true", "htmcp mode none", "htmcp mode bwrap"].entries()
  ) {
    ok(rows[index]!.includes(label), text);
    // 60 commands cannot all have run in under one clock tick of CPU.
    const children = Number(/\| (\d+\.\d+) ms/.exec(rows[index]!)?.[1]);
    ok(children > 0, `${label}: no CPU counted for its reaped processes\n${text}`);
  }
});
