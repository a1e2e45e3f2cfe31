/**
 * `[guards] disable` and the startup warnings for interpreters: names are
 * checked against the policy engine's own guard list.
 */
import assert from "node:assert/strict";
import { GUARD_NAMES } from "../../src/policy/mod.ts";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

Deno.test("loadPolicy() refuses an unknown guard name and suggests the closest one", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[guards]\ndisable = ["sort-output", "find-exek"]\n'),
      'Policy key "guards.disable[2]" is "find-exek", which is not a built-in guard name (did you mean "find-exec"?).',
    );
  });
});

Deno.test("loadPolicy() refuses a guard name with no near match and points to the reference", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[guards]\ndisable = ["everything"]\n'),
      'Policy key "guards.disable[1]" is "everything", which is not a built-in guard name (docs/policy-reference.md lists them).',
    );
  });
});

Deno.test("loadPolicy() accepts every built-in guard name", async () => {
  await withScratch(async (s) => {
    const names = [...GUARD_NAMES];
    const policy = assertLoaded(
      await s.load(`${MINIMAL}[guards]\ndisable = ${JSON.stringify(names)}\n`),
    );
    assert.deepEqual([...policy.disabledGuards], names);
  });
});

Deno.test("docs/policy-reference.md lists every built-in guard name", async () => {
  const reference = await Deno.readTextFile(
    new URL("../../docs/policy-reference.md", import.meta.url),
  );
  const missing = [...GUARD_NAMES].filter((name) => !reference.includes(`\`${name}\``));
  assert.deepEqual(missing, []);
});

Deno.test("loadPolicy() warns once about an allowlisted shell", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL + '[allowlist]\ncommands = ["ls", "sh"]\n'));
    assert.deepEqual(policy.warnings.filter((w) => w.startsWith("The allowlist contains")), [
      'The allowlist contains "sh", which runs any code it is given: the policy cannot inspect that code, so only Deno permissions and the sandbox confine it.',
    ]);
  });
});

Deno.test("loadPolicy() warns about an interpreter hidden behind a harmless name", async () => {
  await withScratch(async (s) => {
    await Deno.mkdir(`${s.dir}/bin`);
    await Deno.symlink("/usr/bin/bash", `${s.dir}/bin/run`);
    const policy = assertLoaded(
      await s.load(`${MINIMAL}[env]\npass = ["PATH"]\n[allowlist]\ncommands = ["run"]\n`, {
        PATH: `${s.dir}/bin`,
      }),
    );
    assert.ok(
      policy.warnings.some((w) => w.startsWith('The allowlist contains "bash"')),
      policy.warnings.join("\n"),
    );
  });
});

Deno.test("loadPolicy() gives no interpreter warning for the shipped read-only tools", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(MINIMAL + '[allowlist]\ncommands = ["ls", "cat", "grep", "find", "sort"]\n'),
    );
    assert.deepEqual(policy.warnings, []);
  });
});
