import { deepEqual, equal, match, ok } from "node:assert/strict";
import { evaluateCommand, GUARD_NAMES, GUARDS } from "../../src/policy/mod.ts";
import { guardAppliesTo, guardsFor } from "../../src/policy/guard_check.ts";
import { policyAllowing, WIDE_ALLOW } from "./_fixtures.ts";

/** One command each guard must refuse, and that must pass once the guard is disabled. */
const SAMPLES: ReadonlyMap<string, string> = new Map([
  ["find-exec", "find . -exec id +"],
  ["find-delete", "find . -delete"],
  ["find-write", "find . -fprint out"],
  ["sort-compress-program", "sort --compress-program=sh f"],
  ["sort-output", "sort -o out f"],
  ["rg-exec", "rg --pre=sh x"],
  ["tar-exec", "tar --to-command=sh -xf a.tar"],
  ["tar-absolute-names", "tar -xPf a.tar"],
  ["tar-remote-archive", "tar -xf host:a.tar"],
  ["tar-files-from", "tar -cf a.tar -T list"],
  ["files0-from", "wc --files0-from=list"],
  ["diff-program", "diff3 --diff-program=sh a b c"],
  ["git-config-override", "git -c core.pager=sh log"],
  ["git-exec-path", "git --exec-path=. status"],
  ["git-upload-pack", "git fetch --upload-pack=sh origin"],
  ["git-rebase-exec", "git rebase -x sh main"],
  ["git-apply-unsafe-paths", "git apply --unsafe-paths fix.patch"],
  ["git-rebase-merges", "git rebase -r main"],
  ["git-recurse-submodules", "git clone --recurse-submodules https://example.com/r.git"],
  ["git-submodule-entry", "git diff HEAD~1 HEAD --submodule=diff"],
  ["git-no-quiet", "git checkout --no-quiet evil"],
  ["git-autostash", "git merge --autostash evil"],
  ["git-stash-branch", "git stash branch x"],
  ["git-bisect-run", "git bisect run sh"],
  ["git-bisect-view", "git bisect view -p"],
  ["git-help", "git log --help"],
  ["git-verbose-diff", "git status -vv"],
  ["git-grep-open-files-in-pager", "git grep -O x"],
  ["git-output-file", "git log --output=out"],
  ["git-diff-drivers", "git diff --ext-diff"],
  ["git-template", "git init --template=t"],
  ["git-trailer-commands", "git commit --trailer=x:y"],
  ["git-subcommand", "git st"],
  ["git-local-transport", "git push ../dst.git HEAD:x"],
  [
    "git-index-info",
    "git update-index --add --cacheinfo 100755,0123456789012345678901234567890123456789,x",
  ],
  ["sed-commands", "sed 'e id' f"],
  ["sed-in-place", "sed -i s/a/b/ f"],
  ["awk-commands", "awk 'BEGIN{system(1)}'"],
  ["zip-unzip-command", "zip -TT sh a.zip f"],
  ["zip-test", "zip -T -b d a.zip f"],
  ["gzip-suffix", "gzip -S x/../../y f"],
  ["csplit-names", "csplit -f sub/. -b %d f 2"],
  ["patch-backup-names", "patch -b -z x/../../y f p.diff"],
  ["tar-backup-suffix", "tar -cf t --backup --suffix=x/../../y f"],
  ["sdiff-merge", "sdiff -o out a b"],
  ["tar-multi-volume", "tar -c -M -L 10 -f x big"],
  ["wget-programs", "wget --use-askpass=sh http://127.0.0.1:1/"],
  ["ssh-client-programs", "scp -o ProxyCommand=sh h:f x"],
  ["openssl-modules", "openssl engine dynamic -pre SO_PATH:./e.so"],
  ["binutils-plugin", "nm --plugin ./e.so e.so"],
  ["man-pager", "man -P sh ls"],
  ["split-filter", "split --filter=sh f"],
  ["rsync-remote-shell", "rsync -e sh a b"],
]);

/**
 * Guards whose samples another guard refuses as well: `git bisect` is a
 * shell script in git 2.39, so the subcommand allowlist refuses it whole;
 * its own guards stand where an operator lets it through.
 */
const BEHIND: ReadonlyMap<string, readonly string[]> = new Map([
  ["git-bisect-run", ["git-subcommand"]],
  ["git-bisect-view", ["git-subcommand"]],
  // -TT only means anything with -T, which zip-test refuses on its own.
  ["zip-unzip-command", ["zip-test"]],
]);

function sampleFor(name: string): string {
  const guard = GUARDS.find((item) => item.name === name);
  ok(guard !== undefined);
  if (guard.match.every((item) => item.kind === "command")) return `${guard.commands[0]} ls`;
  const sample = SAMPLES.get(name);
  ok(sample !== undefined, `guard "${name}" has no test sample`);
  return sample;
}

function allowFor(name: string): string[] {
  const guard = GUARDS.find((item) => item.name === name);
  ok(guard !== undefined);
  return [...new Set([...WIDE_ALLOW, ...guard.commands])];
}

/** Guards judged on files by the check step, not on the words: tests/policy/git_repository_test.ts. */
const ON_DISK = (guard: (typeof GUARDS)[number]) =>
  guard.match.every((item) => item.kind === "git-repository");

for (const guard of GUARDS.filter((item) => !ON_DISK(item))) {
  Deno.test(`guard "${guard.name}" refuses its escape with POLICY_DENIED and names itself`, () => {
    const raw = sampleFor(guard.name);
    const decision = evaluateCommand(raw, policyAllowing(allowFor(guard.name), {}, []));
    ok(!decision.ok, `${raw}: ${JSON.stringify(decision)}`);
    equal(decision.code, "POLICY_DENIED");
    match(decision.reason, new RegExp(`guard "${guard.name}"`));
    ok(decision.reason.includes(guard.source), decision.reason);
  });

  Deno.test(`guard "${guard.name}" can be disabled by name, and then lets its sample through`, () => {
    const raw = sampleFor(guard.name);
    const relaxed = policyAllowing(
      allowFor(guard.name),
      { disabledGuards: new Set([guard.name, ...(BEHIND.get(guard.name) ?? [])]) },
      [],
    );
    const decision = evaluateCommand(raw, relaxed);
    ok(decision.ok, `${raw}: ${JSON.stringify(decision)}`);
  });
}

Deno.test("every guard has a unique name, a reason, a cited source and at least one command", () => {
  equal(GUARD_NAMES.size, GUARDS.length);
  for (const guard of GUARDS) {
    match(guard.name, /^[a-z0-9]+(-[a-z0-9]+)*$/);
    ok(guard.reason.length > 10, guard.name);
    match(guard.source, /^https:\/\//);
    ok(guard.commands.length > 0, guard.name);
    ok(guard.match.length > 0, guard.name);
  }
});

Deno.test("the required wrapper launchers and pagers are guarded as whole commands", () => {
  const required = [
    "env",
    "xargs",
    "timeout",
    "nice",
    "nohup",
    "setsid",
    "stdbuf",
    "sudo",
    "su",
    "doas",
    "chroot",
    "unshare",
    "flock",
    "watch",
    "script",
    "less",
    "more",
  ];
  for (const command of required) {
    const guard = GUARDS.find((item) => item.commands.includes(command));
    ok(guard !== undefined, command);
    deepEqual(guard.match, [{ kind: "command" }], command);
  }
});

Deno.test("a launcher is refused even when the operator allowlisted it", () => {
  const decision = evaluateCommand("env ls", policyAllowing(["env", "ls"]));
  ok(!decision.ok);
  match(decision.reason, /guard "launcher-env"/);
});

Deno.test("a guard applies to the real path's basename too: a renamed launcher is still refused", () => {
  const policy = policyAllowing(["ls"]);
  const allowlist = new Map(policy.allowlist);
  allowlist.set("myenv", { name: "myenv", path: "/usr/bin/env", realPath: "/usr/bin/env" });
  const renamed = Object.freeze({ ...policy, allowlist });
  const decision = evaluateCommand("myenv ls", renamed);
  ok(!decision.ok);
  match(decision.reason, /guard "launcher-env"/);
});

Deno.test("disabling one guard leaves the others on", () => {
  const relaxed = policyAllowing(["find"], { disabledGuards: new Set(["find-delete"]) });
  ok(evaluateCommand("find . -delete", relaxed).ok);
  ok(!evaluateCommand("find . -exec id +", relaxed).ok);
});

Deno.test("guardsFor() is exactly the table filtered by guardAppliesTo, in table order, for any names", () => {
  const known = [...new Set(GUARDS.flatMap((guard) => guard.commands))];
  const cases: string[][] = [[], ["no-such-command"], ["no-such", "command"]];
  for (const name of known) {
    cases.push([name], [name, name], [name, "no-such-command"], ["no-such-command", name]);
  }
  // Two different known names: the allowlisted name and another real basename.
  for (let i = 0; i + 1 < known.length; i += 3) cases.push([known[i]!, known[i + 1]!]);
  for (const names of cases) {
    deepEqual(
      guardsFor(names).map((guard) => guard.name),
      GUARDS.filter((guard) => guardAppliesTo(guard, names)).map((guard) => guard.name),
      JSON.stringify(names),
    );
  }
});
