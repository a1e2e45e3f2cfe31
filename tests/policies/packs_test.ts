/**
 * The shipped policy packs (`policies/*.toml`) load with the real loader and
 * pass their own `[[tests]]`; under git-dev every abbreviation of git's
 * code-running and file-writing options is refused.
 */
import { equal, ok } from "node:assert/strict";
import { loadPolicy } from "../../src/config/mod.ts";
import type { Policy } from "../../src/config/types.ts";
import { evaluateCommand } from "../../src/policy/mod.ts";
import { runPolicyTests } from "../../src/policy_tools/mod.ts";

const PACKS = new URL("../../policies/", import.meta.url);
const PACK_NAMES = ["read-only", "git-readonly", "git-dev", "node-dev", "python-dev", "ci-strict"];

async function loadPack(name: string): Promise<Policy> {
  const loaded = await loadPolicy({
    policyFile: new URL(`${name}.toml`, PACKS).pathname,
    env: {},
  });
  ok(loaded.ok, loaded.ok ? "" : loaded.message);
  return loaded.policy;
}

Deno.test("every pack in policies/ is one of the documented packs", async () => {
  const found: string[] = [];
  for await (const entry of Deno.readDir(PACKS)) {
    if (entry.name.endsWith(".toml")) found.push(entry.name.slice(0, -5));
  }
  equal(found.sort().join(","), [...PACK_NAMES].sort().join(","));
});

for (const name of PACK_NAMES) {
  Deno.test(`policy pack ${name} loads and passes its own [[tests]]`, async () => {
    const policy = await loadPack(name);
    ok(policy.tests.length >= 5, `${name} has only ${policy.tests.length} tests`);
    const outcomes = await runPolicyTests(policy);
    const failures = outcomes.filter((outcome) => !outcome.passed).map((o) => o.failure);
    equal(failures.length, 0, failures.join("\n"));
  });
}

Deno.test("packs that allow interpreters require the kernel sandbox", async () => {
  for (const name of ["node-dev", "python-dev"]) {
    equal((await loadPack(name)).sandbox.mode, "bwrap", name);
  }
});

/** Every prefix of a long option from its shortest unambiguous-looking form. */
function abbreviations(option: string): string[] {
  const out: string[] = [];
  for (let length = 3; length <= option.length; length++) out.push(option.slice(0, length));
  return out;
}

Deno.test("git-dev refuses every abbreviation of --upload-pack, --exec, --config-env and --output", async () => {
  const policy = await loadPack("git-dev");
  const forms: string[] = [];
  for (const option of ["--upload-pack", "--exec", "--config-env", "--output"]) {
    for (const spelled of abbreviations(option)) {
      for (const subcommand of ["log", "diff", "show", "status", "commit", "add"]) {
        forms.push(`git ${subcommand} ${spelled}=touch`, `git ${spelled}=x ${subcommand}`);
      }
    }
  }
  forms.push(
    "git -c core.pager=id log",
    "git -ccore.pager=id log",
    "git log -c",
    "git --exec-path",
  );
  for (const form of forms) {
    const decision = evaluateCommand(form, policy);
    ok(!decision.ok, `${form} was allowed`);
    equal(decision.code, "POLICY_DENIED", form);
  }
  ok(forms.length > 200, String(forms.length));
});

Deno.test("git-dev allows its listed forms, clustered short flags and attached values", async () => {
  const policy = await loadPack("git-dev");
  for (
    const form of [
      "git status -sb",
      "git commit -am 'work'",
      "git commit -mfix",
      "git commit --message=fix",
      "git log -n 3 --oneline",
      "git log -n3",
      "git diff --stat -- src",
      "git switch -c topic",
    ]
  ) {
    const decision = evaluateCommand(form, policy);
    ok(decision.ok, `${form}: ${decision.ok ? "" : decision.reason}`);
  }
});
