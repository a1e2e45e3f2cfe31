/**
 * Attack class: arguments that name paths outside the jail (absolute
 * paths, `..`, slashless symlinks, `--flag=PATH`, attached `-oPATH`,
 * prefix-sharing siblings, `~`). The policy collects candidates
 * (`pathArgumentCandidates`) and the jail resolves them (`confineArgs`);
 * every escape is PATH_ESCAPE, and a write that would land outside is
 * proven not to happen (and to be real once the check is skipped).
 */
import { exists } from "../_helpers/exists.ts";
import { equal, ok } from "node:assert/strict";
import { evaluateCommand, pathArgumentCandidates } from "../../src/policy/mod.ts";
import { confineArgs } from "../../src/jail/mod.ts";
import { DEFAULT_CHILD_PATH, type Policy } from "../../src/config/types.ts";
import { makePolicy } from "../_helpers/policy.ts";
import { type JailFixture, makeJail } from "../jail/_fixtures.ts";

const ALLOW = ["cat", "ls", "grep", "head", "cp", "dd", "sort", "git", "tar", "diff", "wc"];

function policyFor(jail: JailFixture): Policy {
  return makePolicy({ jailRoot: jail.root, allow: ALLOW, deny: ["rm"] });
}

/** The policy-then-jail half of the pipeline, as the tool handler runs it. */
async function check(raw: string, jail: JailFixture) {
  const decision = evaluateCommand(raw, policyFor(jail));
  ok(decision.ok, JSON.stringify(decision));
  const collected = pathArgumentCandidates(decision.argv);
  ok(collected.ok);
  const confined = await confineArgs(jail.root, jail.root, collected.candidates);
  return { decision, confined };
}

const ESCAPES: readonly (readonly [string, (jail: JailFixture) => string])[] = [
  ["an absolute system file", () => "cat /etc/passwd"],
  ["an absolute path after --", () => "cat -- /etc/passwd"],
  ["a parent traversal", () => "cat ../../x"],
  ["a parent traversal to a real outside file", () => "cat ../outside/secret"],
  ["a traversal after an inside folder", () => "cat sub/../../outside/secret"],
  ["a slashless symlink to an outside file", () => "cat file-link"],
  ["a slashless symlink to an outside folder", () => "ls link-out"],
  ["a path through an outside symlink", () => "cat link-out/secret"],
  ["a symlink chain", () => "ls chain-1"],
  ["a --flag=PATH value", () => "grep --file=/etc/passwd x notes.txt"],
  ["a --flag=PATH value through a symlink", () => "grep --file=file-link x notes.txt"],
  ["an attached -fPATH value", () => "grep -f/etc/passwd notes.txt"],
  ["an attached value after a cluster", () => "head -qn1/etc/passwd"],
  ["a key=PATH operand", () => "dd if=/etc/passwd of=copy"],
  ["a key=symlink operand", () => "dd if=file-link of=copy"],
  ["a response-file @PATH", () => "cat @/etc/passwd"],
  ["a file: URL", () => "cat file:///etc/passwd"],
  ["the jail's prefix-sharing sibling", (jail) => `cat ${jail.base}/jail-evil/x`],
  ["a relative path to the prefix-sharing sibling", () => "cat ../jail-evil/x"],
  ["a quoted ~ (home folder)", () => "cat '~/.ssh/id_rsa'"],
  ["a quoted bare ~", () => "ls '~'"],
  ["the filesystem root", () => "ls /"],
  ["a tar -C/ change of folder", () => "tar -C/ -tf a.tar"],
  ["a git -C outside", () => "git -C .. status"],
  ["a new file under an outside symlink", () => "cp notes.txt link-out/copied"],
  ["a dangling symlink that leads out", () => "cp notes.txt dangling-out"],
];

for (const [what, command] of ESCAPES) {
  Deno.test(`path confinement refuses ${what} with PATH_ESCAPE`, async () => {
    const jail = await makeJail();
    try {
      const { confined } = await check(command(jail), jail);
      ok(!confined.ok, JSON.stringify(confined));
      equal(confined.code, "PATH_ESCAPE");
    } finally {
      await jail.cleanup();
    }
  });
}

const ALLOWED: readonly string[] = [
  "cat notes.txt",
  "cat ./notes.txt",
  "cat sub/deep/file.txt",
  "cat link-in/deep/file.txt",
  "grep -r notes .",
  "grep --file=notes.txt x sub/deep/file.txt",
  "sort -u notes.txt",
  "dd if=notes.txt of=copy",
  "cp notes.txt new-copy",
  "ls -la",
  "ls sub",
  "wc -l notes.txt",
  "git log --format=%H",
  "diff notes.txt sub/deep/file.txt",
];

for (const raw of ALLOWED) {
  Deno.test(`path confinement allows ${JSON.stringify(raw)}, which stays inside`, async () => {
    const jail = await makeJail();
    try {
      const { confined } = await check(raw, jail);
      ok(confined.ok, JSON.stringify(confined));
    } finally {
      await jail.cleanup();
    }
  });
}

const WRITES: readonly (readonly [string, string])[] = [
  ["cp notes.txt ../outside/copied", "outside/copied"],
  ["cp notes.txt link-out/copied", "outside/copied"],
  ["dd if=notes.txt of=dangling-out", "outside/new"],
  ["cp --target-directory=link-out notes.txt", "outside/notes.txt"],
  ["dd if=notes.txt of=../outside/copied", "outside/copied"],
];

for (const [raw, landing] of WRITES) {
  Deno.test(`path confinement stops the write ${JSON.stringify(raw)}: nothing lands outside`, async () => {
    const jail = await makeJail();
    try {
      const { decision, confined } = await check(raw, jail);
      ok(decision.ok);
      equal(confined.ok, false);
      ok(!(await exists(`${jail.base}/${landing}`)), "nothing ran, nothing landed");
      // Proof the sample is a real escape: run it as the executor would, skipping the jail.
      const ran = await new Deno.Command(decision.command.path, {
        args: decision.argv.slice(1),
        cwd: jail.root,
        clearEnv: true,
        env: { PATH: DEFAULT_CHILD_PATH },
        stdout: "null",
        stderr: "null",
      }).output();
      ok(ran.success);
      ok(await exists(`${jail.base}/${landing}`), "without the jail check the write escapes");
    } finally {
      await jail.cleanup();
    }
  });
}
