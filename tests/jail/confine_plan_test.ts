import { equal, match, ok } from "node:assert/strict";
import { planPathChecks } from "../../src/policy/mod.ts";
import { CheckBudget, confinePlan, MAX_BASE_FOLDERS } from "../../src/jail/mod.ts";
import { makeJail } from "./_fixtures.ts";

function planOf(argv: readonly string[]) {
  const planned = planPathChecks(argv, [argv[0] as string], false);
  if (!planned.ok) throw new Error(planned.reason);
  return planned.plan;
}

Deno.test("confinePlan() refuses a tree walk larger than the lookup budget, naming the bound", async () => {
  const jail = await makeJail();
  try {
    for (let file = 0; file < 30; file++) await Deno.writeTextFile(`${jail.root}/sub/f${file}`, "");
    const result = await confinePlan(
      jail.root,
      jail.root,
      planOf(["grep", "-R", "x", "sub"]),
      new CheckBudget(5_000, 10),
    );
    ok(!result.ok);
    equal(result.code, "PATH_ESCAPE");
    match(result.reason, /more than 10 filesystem lookups/);
    ok((await confinePlan(jail.root, jail.root, planOf(["grep", "-r", "x", "sub"]))).ok);
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confinePlan() refuses when the deadline has passed, never passing unchecked", async () => {
  const jail = await makeJail();
  try {
    const result = await confinePlan(
      jail.root,
      jail.root,
      planOf(["cat", "sub/deep/file.txt"]),
      new CheckBudget(-1),
    );
    ok(!result.ok);
    match(result.reason, /did not finish within -1 ms/);
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confinePlan() refuses more folder changes than it checks", async () => {
  const jail = await makeJail();
  try {
    const argv = ["tar", ...Array.from({ length: MAX_BASE_FOLDERS + 1 }, (_, i) => `-Cd${i}`)];
    for (let i = 0; i <= MAX_BASE_FOLDERS; i++) await Deno.mkdir(`${jail.root}/d${i}`);
    const result = await confinePlan(jail.root, jail.root, planOf([...argv, "-tf", "t"]));
    ok(!result.ok);
    match(result.reason, /changes folder more than/);
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confinePlan() resolves each folder change from the previous one: -C sub -C .. is the jail", async () => {
  const jail = await makeJail();
  try {
    ok(
      (await confinePlan(
        jail.root,
        jail.root,
        planOf(["tar", "-C", "sub", "-C", "..", "-tf", "t"]),
      )).ok,
    );
    const out = await confinePlan(
      jail.root,
      jail.root,
      planOf(["tar", "-C", "sub", "-C", "../..", "-tf", "t"]),
    );
    ok(!out.ok);
    match(out.reason, /from the folder "sub"/);
    // A folder change through a link that leads out.
    ok(!(await confinePlan(jail.root, jail.root, planOf(["git", "-C", "link-out", "status"]))).ok);
  } finally {
    await jail.cleanup();
  }
});
