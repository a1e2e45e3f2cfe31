/**
 * Attack class: arguments that make an allowlisted, "read-only" tool run a
 * program or write a file (GTFOBins). Each spelling below is refused by the
 * named guard with POLICY_DENIED. A second group proves the samples are real
 * escapes: with the guard on, nothing runs and the canary is absent; with
 * the guard disabled, running the very same argv creates the canary. Tests
 * the policy engine directly (plus the real tools, for the proof).
 */
import { exists } from "../_helpers/exists.ts";
import { equal, match, ok } from "node:assert/strict";
import { evaluateCommand } from "../../src/policy/mod.ts";
import { DEFAULT_CHILD_PATH, type Policy } from "../../src/config/types.ts";
import type { Decision } from "../../src/policy/mod.ts";
import { policyAllowing, WIDE_ALLOW } from "../policy/_fixtures.ts";

const policy = policyAllowing(WIDE_ALLOW, {}, []);

const SPELLINGS: readonly (readonly [string, readonly string[]])[] = [
  ["find-exec", [
    "find . -exec id ';'",
    "find . -execdir id ';'",
    "find . -ok id ';'",
    "find . -okdir id ';'",
    "find -name x -exec id '{}' +",
  ]],
  ["find-delete", ["find . -name x -delete"]],
  ["find-write", [
    "find . -fprint out",
    "find . -fprint0 out",
    "find . -fprintf out %p",
    "find . -fls out",
  ]],
  ["sort-compress-program", [
    "sort --compress-program=sh f",
    "sort --compress-program sh f",
    "sort --compress-prog=sh f",
    "sort --compress=sh f",
    "sort --co=sh f",
  ]],
  ["sort-output", [
    "sort -o out f",
    "sort -oout f",
    "sort -uo out f",
    "sort -uoout f",
    "sort --output=out f",
    "sort --output out f",
    "sort --out=out f",
    "sort --o=out f",
  ]],
  ["rg-exec", [
    "rg --pre=sh x",
    "rg --pre sh x",
    "rg --hostname-bin=sh x",
    "rg --hostname-bin sh x",
  ]],
  ["tar-exec", [
    "tar --to-command=sh -xf a.tar",
    "tar --to-command sh -xf a.tar",
    "tar --to-com=sh -xf a.tar",
    "tar --checkpoint=1 --checkpoint-action=exec=sh -xf a.tar",
    "tar --checkpoint-act=exec=sh -xf a.tar",
    "tar -I sh -xf a.tar",
    "tar -Ish -xf a.tar",
    "tar -xIf sh a.tar",
    "tar xIf sh a.tar",
    "tar --use-compress-program=sh -xf a.tar",
    "tar --use-compress=sh -xf a.tar",
    "tar --rsh-command=sh -xf host:a.tar",
    "tar --rmt-command=sh -xf host:a.tar",
    "tar -F sh -xf a.tar",
    "tar --info-script=sh -xf a.tar",
    "tar --new-volume-script=sh -xf a.tar",
  ]],
  ["tar-remote-archive", [
    "tar -xf host:a.tar",
    "tar -xfhost:a.tar",
    "tar -x -f host:a.tar",
    "tar -xvf user@host:a.tar",
    "tar --file=host:a.tar -x",
    "tar --file host:a.tar -x",
    "tar --fil=host:a.tar -x",
    "tar xf host:a.tar",
    "tar cfb host:a.tar 20 f",
    "tar cbf 20 host:a.tar f",
    "tar -cf a.tar -f host:b.tar f",
    "tar -cf host:a.tar -- --force-local",
    "tar --exclude --force-local -cf host:a.tar f",
    "tar -xf host:dir/a.tar",
  ]],
  ["tar-files-from", [
    "tar -cf a.tar -T list",
    "tar -cf a.tar -Tlist",
    "tar -cTf list a.tar",
    "tar cTf list a.tar",
    "tar -cf a.tar --files-from=list",
    "tar -cf a.tar --files-from list",
    "tar -cf a.tar --files-f=list",
  ]],
  ["files0-from", [
    "sort --files0-from=list",
    "sort --files0-from list",
    "sort --fil=list",
    "wc --files0-from=list",
    "wc -l --files0=list",
    "du --files0-from=list",
    "du -s --files0-from list",
  ]],
  ["diff-program", [
    "diff3 --diff-program=sh a b c",
    "diff3 --diff-program sh a b c",
    "diff3 --diff=sh a b c",
    "diff3 --d=sh a b c",
    "sdiff --diff-program=sh a b",
    "sdiff --diff-prog sh a b",
  ]],
  ["tar-absolute-names", [
    "tar -P -xf a.tar",
    "tar -xPf a.tar",
    "tar xPf a.tar",
    "tar --absolute-names -xf a.tar",
    "tar --absolute -xf a.tar",
  ]],
  ["git-config-override", [
    "git -c core.pager=sh log",
    "git -ccore.pager=sh log",
    "git --config-env=core.pager=X log",
    "git --config-env core.pager=X log",
    "git -C . -c x=y status",
    "git clone -c core.fsmonitor=sh src dst",
    "git clone --config core.fsmonitor=sh src dst",
    "git clone --conf=x src",
  ]],
  ["git-exec-path", ["git --exec-path=. status", "git --exec-path"]],
  ["git-upload-pack", [
    "git fetch --upload-pack=sh origin",
    "git fetch --upload-pack sh origin",
    "git fetch --upload=sh origin",
    "git ls-remote -u sh .",
    "git clone -u sh src",
    "git push --receive-pack=sh origin",
    "git push --exec=sh origin",
    "git push --e=sh origin",
    "git archive --remote=x --exec=sh HEAD",
    "git rebase --exec sh HEAD~1",
  ]],
  ["git-rebase-exec", [
    "git rebase -x sh HEAD~1",
    "git rebase -ix sh HEAD~1",
    "git rebase -xsh HEAD",
  ]],
  ["git-bisect-run", ["git bisect run sh", "git -C . bisect run sh"]],
  ["git-bisect-view", ["git bisect view -p", "git bisect visualize"]],
  ["git-help", ["git log --help", "git --help log", "git diff --hel", "git --help"]],
  ["git-verbose-diff", [
    "git status -v",
    "git status -vv",
    "git status --verbose",
    "git commit -v -a",
    "git commit -av",
    "git commit --verb",
  ]],
  ["git-grep-open-files-in-pager", [
    "git grep -O x",
    "git grep -Osh x",
    "git grep -nO x",
    "git grep --open-files-in-pager=sh x",
    "git grep --open=sh x",
  ]],
  ["git-output-file", [
    "git log --output=out",
    "git diff --output out",
    "git show --out=out",
    "git format-patch --output=x HEAD~1",
  ]],
  ["git-diff-drivers", [
    "git diff --ext-diff",
    "git log -p --ext-diff",
    "git show --ext",
    "git diff --textconv",
    "git log --textc",
  ]],
  ["git-template", ["git init --template=t", "git clone --template t src"]],
  ["git-trailer-commands", ["git commit --trailer x:y", "git commit --trail=x"]],
  ["git-local-transport", [
    "git push ../dst.git HEAD:x",
    "git push /srv/x.git main",
    "git push file:///srv/x.git main",
    "git push --repo=../x.git",
    "git push -o x ../x.git",
    "git fetch ../x.git",
    "git fetch --depth 1 ../x.git",
    "git pull ./x main",
    "git ls-remote .",
    "git ls-remote ..",
    "git clone ../src dst",
    "git clone -b main ../src dst",
    "git clone FILE:///srv/x dst",
    "git clone 'ext::sh -c x' dst",
    "git clone 'fd::3' dst",
    "git remote add o ../x.git",
    "git remote add -t main o /srv/x",
    "git remote set-url o /srv/x",
    "git archive --remote=../x HEAD",
    "git archive --remote ../x HEAD",
    "git fetch ftp://example.com/x.git",
  ]],
  ["git-index-info", [
    "git update-index --index-info",
    "git update-index --add --cacheinfo 100755,0123456789012345678901234567890123456789,x",
    "git update-index --cache=100755,x,y",
  ]],
  ["git-subcommand", [
    "git sparse-checkout set --no-cone x",
    "git checkout-index -a -f --prefix=.gi",
    "git st",
    "git config core.pager sh",
    "git help log",
    "git submodule foreach id",
    "git difftool",
    "git mergetool",
    "git credential fill",
    "git maintenance start",
    "git filter-branch",
    "git range-diff HEAD~1...HEAD",
    "git web--browse x",
    "git send-email x",
    "git -C . config x y",
    "git --bogus-global log",
    "git --shallow-file log st",
  ]],
  ["sed-commands", [
    "sed 'e id' f",
    "sed '1e id' f",
    "sed 's/x/id/e' f",
    "sed -n 'w out' f",
    "sed 'W out' f",
    "sed 'r /etc/passwd' f",
    "sed -e p -e 'e id' f",
    "sed --expression='e id' f",
    "sed -ne 'e id' f",
    "sed -f s.sed f",
    "sed --file=s.sed f",
    "sed -n ':a e id' f",
    "sed -n 'v 4.2 e id' f",
    "sed -n -e ':x' -e 't x e id' f",
    "sed -n ':x;T x w out' f",
  ]],
  ["sed-in-place", [
    "sed -i s/a/b/ f",
    "sed -i.bak s/a/b/ f",
    "sed -ni p f",
    "sed --in-place=.bak s/a/b/ f",
    "sed --in-place s/a/b/ f",
    "sed --in=x s/a/b/ f",
  ]],
  ["awk-commands", [
    `awk 'BEGIN{system("id")}'`,
    `awk '{print | "sh"}' f`,
    `awk '{print > "out"}' f`,
    `awk 'BEGIN{while (("id" | getline line) > 0) print line}'`,
    "awk -f p.awk f",
    `awk -e 'BEGIN{system(1)}'`,
    `mawk 'BEGIN{system("id")}'`,
    `gawk '@load "filefuncs"'`,
    "awk -W exec p.awk",
    `awk 'BEGIN{ARGV[1]="\\057etc\\057shadow";ARGC=2} {print}'`,
    `awk '{print ARGV[0]}' f`,
    `awk 'BEGIN{ARGC=1}' f`,
    `awk 'BEGIN{print ENVIRON["HOME"]}'`,
    `gawk 'BEGIN{print PROCINFO["pid"]}'`,
    `gawk 'BEGIN{SYMTAB["x"]=1}'`,
    `awk 'END{close("f")}' f`,
    `awk -v ARGC=3 '{print}' f`,
    `awk '{print}' ARGC=3 f`,
    `awk -e '{print}' ARGC=3 f`,
    `gawk --assign=ARGC=3 '{print}' f`,
  ]],
  ["zip-unzip-command", [
    "zip -T -TT sh a.zip f",
    "zip -T -TTsh a.zip f",
    "zip -T --unzip-command=sh a.zip f",
    "zip -T --unzip=sh a.zip f",
  ]],
  ["man-pager", [
    "man -P sh ls",
    "man -Psh ls",
    "man --pager=sh ls",
    "man --pager sh ls",
    "man -H ls",
    "man --html=sh ls",
    "man -C cfg ls",
    "man --config-file=cfg ls",
  ]],
  ["split-filter", ["split --filter=sh f", "split --filter sh f", "split --fil=sh f"]],
  ["rsync-remote-shell", [
    "rsync -e sh a b",
    "rsync -ave sh a b",
    "rsync --rsh=sh a b",
    "rsync --rsync-path=sh a b",
  ]],
];

for (const [guard, spellings] of SPELLINGS) {
  for (const raw of spellings) {
    Deno.test(`guard "${guard}" refuses ${JSON.stringify(raw)}`, () => {
      const decision = evaluateCommand(raw, policy);
      ok(!decision.ok, JSON.stringify(decision));
      equal(decision.code, "POLICY_DENIED");
      match(decision.reason, new RegExp(`guard "${guard}"`));
    });
  }
}

const HARMLESS: readonly string[] = [
  "find . -name x -type f",
  "find . -newer f -print",
  "sort -u f",
  "sort -k1,1 -t , f",
  "sort --check f",
  "tar -tf a.tar",
  "tar tvf a.tar",
  "tar --checkpoint=10 -cf x.tar f",
  "tar -czf x.tgz f",
  "git log --oneline",
  "git log -c",
  "git diff --no-ext-diff",
  "git diff --text",
  "git grep -n x",
  "git commit -m x",
  "git push origin main",
  "git push -u origin main",
  "git status -uno",
  "git status -s",
  "git commit -a -m x",
  "git log -h",
  "git -C sub log",
  "git --no-pager log",
  "git --version",
  "git --bare --no-replace-objects --literal-pathspecs log",
  "git --git-dir=.git --work-tree=. status",
  "git --git-dir .git status",
  "git -P status",
  "git push origin main",
  "git push origin feature/x",
  "git push origin HEAD:refs/heads/x",
  "git fetch origin",
  "git fetch origin refs/heads/a:refs/remotes/o/a",
  "git pull origin main",
  "git clone https://example.com/x.git",
  "git clone git@example.com:x.git d",
  "git clone ssh://example.com/x.git",
  "git ls-remote https://example.com/x",
  "git remote add o https://example.com/x.git",
  "git remote -v",
  "git update-index --refresh",
  "sed -n 's/a/b/p' f",
  "sed -E 's/(a|b)/c/g' f",
  "awk '{print}' f",
  "awk -F: '{print NR}' f",
  "zip -r a.zip d",
  "zip -q a.zip f",
  "man ls",
  "man -k ls",
  "split -l 10 f",
  "rsync -av a b",
  "rg -n x",
  "tar -xf a.tar",
  "tar -xf ./a:b.tar",
  "tar -xf dir/a:b.tar",
  "tar --force-local -xf a:b.tar",
  "tar -xf a:b.tar --force-local",
  "tar -czf x.tgz f",
  "tar -cf a.tar -X excludes f",
  "sort -T tmp f",
  "wc -l f",
  "du -sh .",
  "diff3 a b c",
  "sdiff a b",
  "awk '/re/{print}' f",
  "awk '{n++} END{print n}' f",
  "awk -v n=1 '{print n}' f",
  "sed -n ':a;N;ba' f",
  "sed ':a;s/x/y/;ta' f",
  "sed -n '/x/p' f",
  "sed -e 'a hello' f",
];

for (const raw of HARMLESS) {
  Deno.test(`the guards let the everyday ${JSON.stringify(raw)} through`, () => {
    const decision = evaluateCommand(raw, policy);
    ok(decision.ok, JSON.stringify(decision));
  });
}

// --- proof that the samples are real escapes -----------------------------

async function git(cwd: string, ...args: string[]): Promise<void> {
  const result = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args],
    cwd,
    stdout: "null",
    stderr: "null",
  }).output();
  ok(result.success, `setup git ${args.join(" ")}`);
}

/** A temp jail with a text file, a tar and zip of it, and a git repo with two commits. */
async function makeWorkspace(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-escape-" });
  await Deno.writeTextFile(`${dir}/f`, "a\nx\n");
  // A program in the jail, for options that run a program by name without a shell.
  await Deno.writeTextFile(`${dir}/evil.sh`, "#!/bin/sh\ntouch canary\n");
  await Deno.chmod(`${dir}/evil.sh`, 0o755);
  const tar = await new Deno.Command("tar", { args: ["-cf", "a.tar", "f"], cwd: dir }).output();
  ok(tar.success);
  const zip = await new Deno.Command("zip", { args: ["-q", "a.zip", "f"], cwd: dir }).output();
  ok(zip.success);
  await git(dir, "init", "-q", ".");
  await git(dir, "add", "f");
  await git(dir, "commit", "-qm", "one");
  await Deno.writeTextFile(`${dir}/g`, "x\n");
  await git(dir, "add", "g");
  await git(dir, "commit", "-qm", "two");
  return dir;
}

/** Runs the decision's argv as the executor would (no shell), only when allowed. */
async function runIfAllowed(decision: Decision, cwd: string): Promise<void> {
  if (!decision.ok) return;
  await new Deno.Command(decision.command.path, {
    args: decision.argv.slice(1),
    cwd,
    clearEnv: true,
    env: {
      PATH: DEFAULT_CHILD_PATH,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.invalid",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.invalid",
    },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
}

const PROOFS: readonly (readonly [readonly string[], string])[] = [
  [["find-exec"], "find . -name f -exec touch canary ';'"],
  [["find-write"], "find . -fprint canary"],
  [["sort-output"], "sort -o canary f"],
  [["tar-exec"], "tar --to-command='touch canary' -xf a.tar"],
  [["tar-exec"], "tar -xf a.tar --checkpoint=1 --checkpoint-action=exec='touch canary'"],
  [["tar-exec"], `tar -I 'sh -c "touch canary"' -tf a.tar`],
  [["sed-commands"], "sed -n '1e touch canary' f"],
  [["sed-commands"], "sed -n 'w canary' f"],
  [["sed-commands"], "sed 's/.*/touch canary/e' f"],
  [["sed-commands"], "sed -n ':a e touch canary' f"],
  [["sed-commands"], "sed -n 'v 4.2 e touch canary' f"],
  [["sed-commands"], "sed -n -e ':x' -e 't x e touch canary' f"],
  [["diff-program"], "diff3 --diff-program=./evil.sh f f f"],
  [["diff-program"], "sdiff --diff-program=./evil.sh f f"],
  [["awk-commands"], `awk 'BEGIN{system("touch canary")}'`],
  [["awk-commands"], `awk '{print > "canary"}' f`],
  // -T alone runs unzip through a shell line (guard zip-test); -TT names the program.
  [["zip-unzip-command", "zip-test"], `zip -T -TT 'sh -c "touch canary"' a.zip f`],
  [["split-filter"], "split --filter='touch canary' f"],
  [["git-grep-open-files-in-pager"], "git grep '-Otouch canary' x"],
  [["git-config-override", "git-subcommand"], "git -c 'alias.x=!touch canary' x"],
  [["git-output-file"], "git log --output=canary"],
  [["git-upload-pack", "git-local-transport"], "git ls-remote '--upload-pack=touch canary' ."],
  [["git-rebase-exec"], "git rebase -x 'touch canary' HEAD~1"],
];

function withDisabled(base: Policy, names: readonly string[]): Policy {
  return Object.freeze({ ...base, disabledGuards: new Set(names) });
}

for (const [guards, raw] of PROOFS) {
  Deno.test(`guard "${guards[0]}" stops ${JSON.stringify(raw)}: no canary while on, canary once off`, async () => {
    const dir = await makeWorkspace();
    try {
      const denied = evaluateCommand(raw, policy);
      ok(!denied.ok, JSON.stringify(denied));
      equal(denied.code, "POLICY_DENIED");
      match(denied.reason, new RegExp(`guard "${guards[0]}"`));
      await runIfAllowed(denied, dir);
      ok(!(await exists(`${dir}/canary`)), "nothing ran while the guard was on");

      const allowed = evaluateCommand(raw, withDisabled(policy, guards));
      ok(allowed.ok, JSON.stringify(allowed));
      await runIfAllowed(allowed, dir);
      ok(await exists(`${dir}/canary`), "the sample is a real escape once the guard is off");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("guard find-delete stops find -delete: the victim file survives while on", async () => {
  const dir = await makeWorkspace();
  try {
    const raw = "find . -name f -delete";
    await runIfAllowed(evaluateCommand(raw, policy), dir);
    ok(await exists(`${dir}/f`));
    await runIfAllowed(evaluateCommand(raw, withDisabled(policy, ["find-delete"])), dir);
    ok(!(await exists(`${dir}/f`)), "the sample really deletes once the guard is off");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("guard sed-in-place stops sed -i: the file is unchanged while on", async () => {
  const dir = await makeWorkspace();
  try {
    const raw = "sed -i s/a/CHANGED/ f";
    await runIfAllowed(evaluateCommand(raw, policy), dir);
    equal(await Deno.readTextFile(`${dir}/f`), "a\nx\n");
    await runIfAllowed(evaluateCommand(raw, withDisabled(policy, ["sed-in-place"])), dir);
    equal(await Deno.readTextFile(`${dir}/f`), "CHANGED\nx\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
