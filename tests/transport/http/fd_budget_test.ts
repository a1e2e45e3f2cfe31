import assert from "node:assert/strict";
import {
  ASSUMED_FD_LIMIT,
  describeFdBudget,
  fdBudget,
  parseProcLimits,
  readFdLimit,
} from "../../../src/transport/http/fd_budget.ts";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            256                  4096                 files
Max locked memory         8388608              8388608              bytes
`;

Deno.test("parseProcLimits() reads the soft 'Max open files' value, and null when absent", () => {
  assert.equal(parseProcLimits(LIMITS), 256);
  assert.equal(parseProcLimits("Max cpu time unlimited unlimited seconds\n"), null);
  assert.equal(parseProcLimits("Max open files            unlimited   unlimited  files\n"), null);
});

Deno.test("readFdLimit() prefers HTMCP_FD_LIMIT, then /proc, and assumes 1024 when neither is readable", () => {
  const denied = () => {
    throw new Deno.errors.NotCapable("no /proc");
  };
  assert.deepEqual(readFdLimit((n) => n === "HTMCP_FD_LIMIT" ? "512" : undefined, denied), {
    limit: 512,
    source: "HTMCP_FD_LIMIT",
  });
  assert.deepEqual(readFdLimit(() => undefined, () => LIMITS), {
    limit: 256,
    source: "/proc/self/limits",
  });
  assert.deepEqual(readFdLimit(() => "not-a-number", denied), {
    limit: ASSUMED_FD_LIMIT,
    source: "assumed",
  });
  assert.deepEqual(readFdLimit(() => "0", denied), { limit: ASSUMED_FD_LIMIT, source: "assumed" });
});

Deno.test("fdBudget() keeps a reserve for the runtime, the audit log and each command's pipes", () => {
  const budget = fdBudget({ limit: 256, source: "HTMCP_FD_LIMIT" }, 0, 4);
  assert.equal(budget.reserve, 64 + 8 * 4);
  assert.equal(budget.maxConnections, 256 - 96);
  assert.equal(budget.warning, null);
  assert.equal(
    describeFdBudget(budget),
    "file descriptors: limit 256 (HTMCP_FD_LIMIT), 96 reserved, at most 160 HTTP connections",
  );
  // A tiny limit still gets a few connections.
  assert.equal(fdBudget({ limit: 50, source: "assumed" }, 0, 4).maxConnections, 4);
  // A configured value is kept, with a warning when it eats into the reserve.
  const over = fdBudget({ limit: 256, source: "HTMCP_FD_LIMIT" }, 1000, 4);
  assert.equal(over.maxConnections, 1000);
  assert.match(over.warning ?? "", /http\.max_connections = 1000 leaves fewer than 96/);
  assert.equal(fdBudget({ limit: 4096, source: "assumed" }, 100, 4).warning, null);
});
