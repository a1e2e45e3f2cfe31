import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import { evaluateCommand, type PolicyIo } from "../../src/policy/mod.ts";
import { makePolicy } from "../_helpers/policy.ts";
import { POLICY_JAIL, policyAllowing } from "./_fixtures.ts";

const policy = makePolicy({ jailRoot: POLICY_JAIL });

Deno.test("evaluateCommand() allows an allowlisted command and returns its resolved entry", () => {
  const decision = evaluateCommand("ls -la", policy);
  ok(decision.ok, JSON.stringify(decision));
  deepEqual(decision.argv, ["ls", "-la"]);
  equal(decision.command, policy.allowlist.get("ls"));
  match(decision.reason, /allowlist/);
});

Deno.test("evaluateCommand() denies by default: a command not on the allowlist is refused", () => {
  const decision = evaluateCommand("touch x", policy);
  ok(!decision.ok);
  equal(decision.code, "POLICY_DENIED");
  deepEqual(decision.argv, ["touch", "x"], "the split argv is kept for the audit record");
  equal(decision.reason, 'Cannot run "touch": it is not on the allowlist.');
});

Deno.test("evaluateCommand() denies everything under an empty allowlist", () => {
  const empty = policyAllowing([]);
  for (const raw of ["ls", "true", "echo hi", "git status"]) {
    const decision = evaluateCommand(raw, empty);
    ok(!decision.ok, raw);
    equal(decision.code, "POLICY_DENIED");
  }
});

Deno.test("evaluateCommand() lets the denylist win over the allowlist", () => {
  const both = policyAllowing(["ls", "cat"], {}, ["cat"]);
  const decision = evaluateCommand("cat notes.txt", both);
  ok(!decision.ok);
  equal(decision.code, "POLICY_DENIED");
  equal(decision.reason, 'Cannot run "cat": it is on the denylist.');
});

Deno.test("evaluateCommand() denies a denylisted command in any case", () => {
  const both = policyAllowing(["ls"], {}, ["rm"]);
  for (const raw of ["rm x", "RM x", "rM x", "Rm x"]) {
    const decision = evaluateCommand(raw, both);
    ok(!decision.ok, raw);
    match(decision.reason, /denylist/);
  }
});

Deno.test("evaluateCommand() checks the real path's basename against the denylist (sh -> dash)", () => {
  const shPolicy = policyAllowing(["sh"]);
  const sh = shPolicy.allowlist.get("sh");
  ok(sh !== undefined);
  const realName = sh.realPath.slice(sh.realPath.lastIndexOf("/") + 1);
  const denying = policyAllowing(["sh"], {}, [realName]);
  const decision = evaluateCommand("sh -c true", denying);
  ok(!decision.ok);
  match(decision.reason, new RegExp(`"${realName}" is on the denylist`));
});

Deno.test("evaluateCommand() refuses a path-qualified command when realPath cannot resolve it", () => {
  const ls = policy.allowlist.get("ls");
  ok(ls !== undefined);
  const unreadable: PolicyIo = { realPath: () => null };
  const decision = evaluateCommand(`${ls.path} -la`, policy, unreadable);
  ok(!decision.ok);
  equal(decision.code, "POLICY_DENIED");
  match(decision.reason, /not the same file/);
});

Deno.test("evaluateCommand() asks the injected io only for path-qualified words", () => {
  const asked: string[] = [];
  const io: PolicyIo = {
    realPath(path) {
      asked.push(path);
      return null;
    },
  };
  evaluateCommand("ls -la /etc", policy, io);
  evaluateCommand("cat /etc/passwd", policy, io);
  deepEqual(asked, []);
  evaluateCommand("/usr/bin/ls", policy, io);
  deepEqual(asked, ["/usr/bin/ls"]);
});

Deno.test("evaluateCommand() refuses a path that resolves to an allowlisted file under another name", () => {
  const ls = policy.allowlist.get("ls");
  ok(ls !== undefined);
  // /usr/bin/dir is another coreutils binary; even if io claimed it were ls, its
  // basename is not allowlisted, so the same-file check is never reached.
  const liar: PolicyIo = { realPath: () => ls.realPath };
  const decision = evaluateCommand("/usr/bin/dir", policy, liar);
  ok(!decision.ok);
  match(decision.reason, /"dir" is not on the allowlist/);
});

Deno.test("evaluateCommand() reads its input once: a non-string is a TypeError before any read", () => {
  let reads = 0;
  const tricky = {
    toString() {
      reads++;
      return reads === 1 ? "ls" : "rm -rf /";
    },
  };
  // deno-lint-ignore no-explicit-any
  throws(() => evaluateCommand(tricky as any, policy), TypeError);
  equal(reads, 0, "the engine never coerces, so a changing value cannot be read twice");
});

Deno.test("evaluateCommand() returns a frozen argv", () => {
  const decision = evaluateCommand("echo a b", policy);
  ok(decision.ok);
  ok(Object.isFrozen(decision.argv));
});

Deno.test("evaluateCommand() inserts --no-ext-diff --no-textconv after git diff-family subcommands", () => {
  for (
    const [raw, argv] of [
      ["git diff HEAD", ["git", "diff", "--no-ext-diff", "--no-textconv", "HEAD"]],
      ["git log -p", ["git", "log", "--no-ext-diff", "--no-textconv", "-p"]],
      ["git -C sub show", ["git", "-C", "sub", "show", "--no-ext-diff", "--no-textconv"]],
      ["git blame f", ["git", "blame", "--no-textconv", "f"]],
      ["git reflog -p", ["git", "reflog", "--no-ext-diff", "--no-textconv", "-p"]],
      ["git reflog show -p", ["git", "reflog", "show", "--no-ext-diff", "--no-textconv", "-p"]],
      ["git reflog expire --all", ["git", "reflog", "expire", "--all"]],
      ["git stash list -p", ["git", "stash", "list", "--no-ext-diff", "--no-textconv", "-p"]],
      ["git stash push", ["git", "stash", "push"]],
      ["git status", ["git", "status"]],
    ] as const
  ) {
    const decision = evaluateCommand(raw, policy);
    ok(decision.ok, raw);
    deepEqual(decision.argv, argv);
  }
});

Deno.test("evaluateCommand() leaves git argv alone when the git-diff-drivers guard is disabled", () => {
  const relaxed = policyAllowing(["git"], { disabledGuards: new Set(["git-diff-drivers"]) });
  const decision = evaluateCommand("git diff --ext-diff", relaxed);
  ok(decision.ok, JSON.stringify(decision));
  deepEqual(decision.argv, ["git", "diff", "--ext-diff"]);
});

Deno.test("evaluateCommand() answers PARSE_ERROR with a null argv for an unbalanced quote", () => {
  const decision = evaluateCommand(`echo "oops`, policy);
  ok(!decision.ok);
  equal(decision.code, "PARSE_ERROR");
  equal(decision.argv, null);
});

Deno.test("evaluateCommand() answers PARSE_ERROR for an empty command", () => {
  const decision = evaluateCommand("   ", policy);
  ok(!decision.ok);
  equal(decision.code, "PARSE_ERROR");
});
