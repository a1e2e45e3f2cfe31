/**
 * Attack class (mode none): a symlink in a git folder, where git writes its
 * own files by name. The red team's chain: a link whose relative text stays
 * inside where it is made (`d1/d2/c -> ../../outside/victim.txt`), moved
 * with `mv` to `.git/COMMIT_EDITMSG`, where the same text leads out; then
 * `git commit -m TEXT` writes TEXT through it, over a host file. No argument
 * names the link, so only a search of the git folder sees it: layer 1
 * refuses every git command while one leads out (POLICY_DENIED, guard
 * git-repository). The raw tool shows git really writes through it. The
 * move itself is now refused too (only git works in a git folder without the
 * sandbox); the link is planted, as a repository handed to the jail may hold it.
 */
import { equal, match, ok } from "node:assert/strict";
import { assertRefused, layer1, makeTree, runRaw } from "./_layer1.ts";
import { chownTree } from "../_helpers/jail.ts";

const LINK_TEXT = "../../outside/victim.txt";

/** A repository with one commit and an identity at the jail's root, and a host file to overwrite. */
async function makeRepository(jail: string, outside: string): Promise<void> {
  await Deno.writeTextFile(`${outside}/victim.txt`, "ORIGINAL\n");
  for (
    const args of [
      ["init", "-q", "."],
      ["config", "user.name", "t"],
      ["config", "user.email", "t@example.invalid"],
      ["add", "notes.txt"],
      ["commit", "-qm", "one"],
    ]
  ) {
    const ran = await runRaw(jail, "git", ["-c", "safe.directory=*", ...args]);
    ok(ran.success, `setup: git ${args.join(" ")}: ${ran.stderr}`);
  }
  await Deno.mkdir(`${jail}/d1/d2`, { recursive: true });
  // Commands run as the jail's owner: the repository is theirs, as one they made would be.
  await chownTree(jail);
  // Inside where it is made: jail/d1/d2/../../outside is jail/outside.
  await Deno.symlink(LINK_TEXT, `${jail}/d1/d2/c`);
}

Deno.test("layer 1 refuses git while a link in the git folder leads out (.git/COMMIT_EDITMSG moved there with mv): POLICY_DENIED, the host file unchanged", async () => {
  const raw = await makeTree();
  try {
    await makeRepository(raw.jail, raw.outside);
    ok((await runRaw(raw.jail, "mv", ["d1/d2/c", ".git/COMMIT_EDITMSG"])).success);
    const ran = await runRaw(raw.jail, "git", [
      "-c",
      "safe.directory=*",
      "commit",
      "--allow-empty",
      "-qm",
      "ATTACKER-KEY",
    ]);
    ok(ran.success, ran.stderr);
    equal(
      await Deno.readTextFile(`${raw.outside}/victim.txt`),
      "ATTACKER-KEY\n",
      "raw git wrote through the link",
    );
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }

  await using fx = await layer1();
  await makeRepository(fx.jail, fx.outside);
  // Before the move the link leads nowhere outside: git runs.
  const status = await fx.run("git status --short");
  equal(status.code, "OK", status.policy_reason);
  // The move itself is refused now: without the sandbox only git works in a
  // git folder (git_state_files_test.ts). A repository the jail was given
  // may hold such a link already: planted here, the repository check finds it.
  const moved = await assertRefused(fx, "mv d1/d2/c .git/COMMIT_EDITMSG", "POLICY_DENIED");
  match(moved.policy_reason, /inside the git folder ".git"/);
  await Deno.rename(`${fx.jail}/d1/d2/c`, `${fx.jail}/.git/COMMIT_EDITMSG`);
  const refused = await assertRefused(
    fx,
    "git commit --allow-empty -m ATTACKER-KEY",
    "POLICY_DENIED",
  );
  match(refused.policy_reason, /guard "git-repository"/);
  match(refused.policy_reason, /the git folder holds a symlink \("\.git\/COMMIT_EDITMSG"\)/);
  // Every git command, not only commit: git writes its files whatever the subcommand.
  await assertRefused(fx, "git status", "POLICY_DENIED");
  equal(await Deno.readTextFile(`${fx.outside}/victim.txt`), "ORIGINAL\n");
});

Deno.test("layer 1 refuses git while a loose objects' fan-out folder is a link leading out", async () => {
  await using fx = await layer1();
  await makeRepository(fx.jail, fx.outside);
  // A fan-out name the commit's own objects did not take (their hashes vary with the time).
  let fan = "";
  for (let n = 0; n < 256 && fan === ""; n++) {
    const name = n.toString(16).padStart(2, "0");
    if (!(await Deno.lstat(`${fx.jail}/.git/objects/${name}`).then(() => true, () => false))) {
      fan = name;
    }
  }
  await Deno.mkdir(`${fx.outside}/objects-${fan}`);
  await Deno.symlink(`${fx.outside}/objects-${fan}`, `${fx.jail}/.git/objects/${fan}`);
  const refused = await assertRefused(fx, "git status", "POLICY_DENIED");
  match(refused.policy_reason, new RegExp(`holds a symlink \\("\\.git/objects/${fan}"\\)`));
});
