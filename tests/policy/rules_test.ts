import { equal, match, ok } from "node:assert/strict";
import { evaluateCommand, ruleWordMatches } from "../../src/policy/mod.ts";
import { policyAllowing } from "./_fixtures.ts";

const policy = policyAllowing(["git", "ls", "cat"], {
  rules: [
    {
      command: "git",
      denyArgs: ["push --force", "push -f"],
      reason: "no force pushes",
      enforce: "deny",
    },
    {
      command: "git",
      denyArgs: ["commit --amend"],
      reason: "history is append-only",
      enforce: "deny",
    },
    {
      command: "git",
      denyArgs: ["clean"],
      reason: "clean deletes untracked files",
      enforce: "deny",
    },
    {
      command: "ls",
      denyArgs: ["-R"],
      reason: "recursive listings flood the output",
      enforce: "deny",
    },
    { command: "cat", denyArgs: ["--format=x"], reason: "exact word", enforce: "deny" },
    {
      command: "ls",
      denyArgs: ["-l"],
      reason: "long listings are being phased out",
      enforce: "warn",
    },
  ],
});

Deno.test('evaluateCommand() runs a command only an enforce = "warn" rule matches, and says so', () => {
  const decision = evaluateCommand("ls -l", policy);
  ok(decision.ok, JSON.stringify(decision));
  equal(decision.ruleWarnings.length, 1);
  match(decision.ruleWarnings[0] ?? "", /"-l" \(enforce = "warn"\) would have refused/);
  match(decision.ruleWarnings[0] ?? "", /long listings are being phased out/);
});

Deno.test("evaluateCommand() still refuses with a deny rule when a warn rule also matches", () => {
  const decision = evaluateCommand("ls -l -R", policy);
  ok(!decision.ok);
  match(decision.reason, /"-R"/);
});

Deno.test("evaluateCommand() gives no rule warning when no warn rule matches", () => {
  const decision = evaluateCommand("ls -a", policy);
  ok(decision.ok);
  equal(decision.ruleWarnings.length, 0);
});

const DENIED: readonly (readonly [string, string])[] = [
  ["git push --force", "push --force"],
  ["git --force push", "push --force"],
  ["git push origin main --force", "push --force"],
  ["git push --force=yes", "push --force"],
  ["git push --forc", "push --force"],
  ["git push -f", "push -f"],
  ["git push -fu origin", "push -f"],
  ["git push -uf origin", "push -f"],
  ["git -C sub push -f", "push -f"],
  ["git commit --amend -m x", "commit --amend"],
  ["git commit --am", "commit --amend"],
  ["git clean -fdx", "clean"],
  ["ls -R", "-R"],
  ["ls -laR /", "-R"],
  ["cat --format=x", "--format=x"],
];

for (const [raw, entry] of DENIED) {
  Deno.test(`evaluateCommand() applies the rule "${entry}" to ${JSON.stringify(raw)}`, () => {
    const decision = evaluateCommand(raw, policy);
    ok(!decision.ok, JSON.stringify(decision));
    equal(decision.code, "POLICY_DENIED");
    match(decision.reason, new RegExp(`policy rule "${entry}"`));
  });
}

const ALLOWED: readonly string[] = [
  "git push origin main",
  "git push --force-with-lease",
  "git push --no-force",
  "git log --format=%H",
  "git status -s",
  "git commit -m amend",
  "git commit --message=--amend",
  "ls -r",
  "ls -la",
  "cat --format=y",
  "cat --format",
];

for (const raw of ALLOWED) {
  Deno.test(`evaluateCommand() lets ${JSON.stringify(raw)} through the rules`, () => {
    const decision = evaluateCommand(raw, policy);
    ok(decision.ok, JSON.stringify(decision));
  });
}

Deno.test("evaluateCommand() applies a rule only to its own command", () => {
  const decision = evaluateCommand("cat push --force", policy);
  ok(decision.ok, JSON.stringify(decision));
});

Deno.test("ruleWordMatches() documents its semantics: long prefixes, short clusters, exact others", () => {
  ok(ruleWordMatches("--force", "--force"));
  ok(ruleWordMatches("--force", "--force=1"));
  ok(ruleWordMatches("--force", "--fo"));
  ok(!ruleWordMatches("--force", "--force-with-lease"));
  ok(!ruleWordMatches("--force", "-f"));
  ok(ruleWordMatches("-f", "-f"));
  ok(ruleWordMatches("-f", "-xf"));
  ok(ruleWordMatches("-f", "-fVALUE"));
  ok(!ruleWordMatches("-f", "--f"));
  ok(!ruleWordMatches("-f", "f"));
  ok(ruleWordMatches("-delete", "-delete"));
  ok(!ruleWordMatches("-delete", "-d"));
  ok(ruleWordMatches("push", "push"));
  ok(!ruleWordMatches("push", "Push"));
  ok(!ruleWordMatches("push", "pushd"));
});

Deno.test("evaluateCommand() ignores a rule entry with no words instead of refusing everything", () => {
  const blank = policyAllowing(["ls"], {
    rules: [{ command: "ls", denyArgs: ["   "], reason: "blank", enforce: "deny" }],
  });
  ok(evaluateCommand("ls -la", blank).ok);
});
