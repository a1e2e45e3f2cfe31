import { deepEqual, equal } from "node:assert/strict";
import { diffJoins, MAX_DIFF_OPERANDS } from "../../src/policy/path_model/diff_operands.ts";

Deno.test("diffJoins() joins every pair of diff's operands both ways, --from-file and --to-file values too", () => {
  deepEqual(diffJoins(["diff", "f", "d"], "diff"), ["f/d", "d/f"]);
  deepEqual(diffJoins(["diff", "-N", "--to-file=d", "f"], "diff"), ["d/f", "f/d"]);
  deepEqual(diffJoins(["diff", "--from-file", "d", "f"], "diff"), ["d/f", "f/d"]);
  deepEqual(diffJoins(["diff", "-", "f"], "diff"), [], "stdin joins nothing");
  deepEqual(diffJoins(["diff", "--", "-x", "d"], "diff"), ["-x/d", "d/-x"], "operands after --");
  deepEqual(diffJoins(["cat", "f", "d"], "cat"), [], "another tool joins nothing");
});

Deno.test("diffJoins() refuses more operands than it joins, rather than checking some", () => {
  const many = Array.from({ length: MAX_DIFF_OPERANDS + 1 }, (_, i) => `f${i}`);
  equal(diffJoins(["diff", "--to-file=d", ...many], "diff"), null);
  equal(
    diffJoins(["diff", ...many.slice(2)], "diff")?.length,
    (MAX_DIFF_OPERANDS - 1) * (MAX_DIFF_OPERANDS - 2),
  );
});
