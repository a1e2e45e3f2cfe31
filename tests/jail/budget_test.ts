/**
 * The path checks' lookups are synchronous (one waited for the runtime's
 * thread pool per path component before) and paced: every
 * `LOOKUPS_PER_TURN` lookups the event loop takes a turn, so a check that
 * walks a large tree on the model's input cannot hold the whole server.
 */
import { equal, ok } from "node:assert/strict";
import { CheckBudget, LOOKUPS_PER_TURN } from "../../src/jail/budget.ts";

Deno.test("no turn of the event loop within LOOKUPS_PER_TURN - 1 lookups, one at the next", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-budget-" });
  try {
    const budget = new CheckBudget();
    let turned = false;
    const timer = setTimeout(() => turned = true, 0);
    for (let i = 0; i < LOOKUPS_PER_TURN - 1; i++) {
      const found = await budget.lstat(`${dir}/missing-${i}`);
      ok("error" in found, "a missing name is a lookup error, not a budget refusal");
    }
    equal(turned, false, "a lookup yielded to the event loop before its turn");
    await budget.lstat(`${dir}/missing-last`);
    equal(turned, true, "the event loop did not get its turn");
    clearTimeout(timer);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a name looked up again is answered from the call's cache, paying no lookup", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-budget-" });
  try {
    const budget = new CheckBudget(5_000, 1);
    const first = await budget.lstat(dir);
    ok("isDirectory" in first && first.isDirectory);
    const again = await budget.lstat(dir);
    equal(again, first);
    const other = await budget.lstat(`${dir}/other`);
    ok("budget" in other, "the second distinct name exceeds a budget of one lookup");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
