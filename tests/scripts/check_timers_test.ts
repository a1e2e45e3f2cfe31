/**
 * The timer check finds each way code can reach the global (Node) timers,
 * lets prose name them, and passes on the real `src/`.
 */
import assert from "node:assert/strict";
import { checkTimers, findGlobalTimers } from "../../scripts/check_timers.ts";

Deno.test("findGlobalTimers() finds calls, globalThis references and Deno's ref and unref", () => {
  const source = [
    "const a = setTimeout(() => {}, 5);",
    "clearTimeout(a);",
    "const b = setInterval(tick, 10);",
    "  clearInterval (b);",
    "const c = globalThis.setTimeout;",
    "Deno.unrefTimer(b);",
    "Deno.refTimer(b);",
  ].join("\n");
  assert.deepEqual(findGlobalTimers(source).map((f) => f.line), [1, 2, 3, 4, 5, 6, 7]);
});

Deno.test("findGlobalTimers() lets comments and other names through", () => {
  const source = [
    "// a setTimeout(fn, 0) in a line comment",
    "/** as with `setTimeout`, and setInterval(x) in a doc comment",
    " * clearTimeout(t) still inside it */",
    "const x = scheduler.setTimeout(1); // a method of our own",
    "const y = mySetTimeout(2);",
    "/* setTimeout( */ const z = 3;",
  ].join("\n");
  assert.deepEqual(findGlobalTimers(source), []);
});

Deno.test("findGlobalTimers() finds code after a block comment ends on its line", () => {
  const source = ["/* a note", "   ends here */ setTimeout(run, 1);"].join("\n");
  assert.deepEqual(findGlobalTimers(source).map((f) => f.line), [2]);
});

Deno.test("no module of src/ outside src/timers/ uses a global timer", async () => {
  assert.deepEqual(await checkTimers(), []);
});
