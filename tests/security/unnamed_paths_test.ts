/**
 * Attack class (mode none): paths a tool opens that no argument names,
 * found by the second red-team round. Each is first shown against the raw
 * tool, then refused by layer 1 (nothing runs, nothing under the base
 * changes, the attempt is audited):
 *
 * - paths read from a list: `git hash-object --stdin-paths` (stdin) and
 *   `sha256sum -c sums` (a checksum file; a yes/no oracle on a host file);
 * - names a tool computes: `git format-patch` names each patch after its
 *   commit's subject and writes through a link at that name;
 * - names a tool joins: `diff f d` compares `f` with `d/f`.
 *
 * `git apply --unsafe-paths` (paths inside the patch) is refused by its guard.
 */
import { equal, match, ok } from "node:assert/strict";
import { assertRefused, layer1, LAYER1_ALLOW, makeTree, runRaw } from "./_layer1.ts";
import { chownTree } from "../_helpers/jail.ts";

const ALLOW = [...LAYER1_ALLOW, "sha256sum"];

async function rawGit(cwd: string, args: readonly string[], stdin?: string) {
  const child = new Deno.Command("git", {
    args: ["-c", "safe.directory=*", ...args],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: cwd },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  return { ok: out.success, stdout: new TextDecoder().decode(out.stdout) };
}

async function makeRepository(jail: string): Promise<void> {
  for (
    const args of [
      ["init", "-q", "-b", "main", "."],
      ["config", "user.name", "t"],
      ["config", "user.email", "t@example.invalid"],
      ["add", "notes.txt"],
      ["commit", "-qm", "x"],
    ]
  ) {
    ok((await rawGit(jail, args)).ok, `setup: git ${args.join(" ")}`);
  }
  await chownTree(jail);
}

Deno.test("layer 1 refuses git hash-object --stdin-paths, which hashes and stores files named on stdin (POLICY_DENIED)", async () => {
  const raw = await makeTree();
  try {
    await makeRepository(raw.jail);
    const stored = await rawGit(
      raw.jail,
      ["hash-object", "-w", "--stdin-paths"],
      `${raw.outside}/secret.txt\n`,
    );
    const shown = await rawGit(raw.jail, ["cat-file", "-p", stored.stdout.trim()]);
    equal(shown.stdout, "TOP-SECRET-OUTSIDE\n", "raw git stored the host file");
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }
  await using fx = await layer1(ALLOW);
  await makeRepository(fx.jail);
  for (const command of ["git hash-object -w --stdin-paths", "git hash-object --stdin-p"]) {
    const refused = await assertRefused(fx, command, "POLICY_DENIED");
    match(refused.policy_reason, /read the paths it opens from a file/);
  }
  // The content itself on stdin names no path: allowed.
  equal((await fx.run("git hash-object --stdin")).code, "OK");
});

Deno.test("layer 1 refuses sha256sum -c, whose checksum file names the files it reads (POLICY_DENIED)", async () => {
  const raw = await makeTree();
  try {
    const sum = (await runRaw(raw.outside, "sha256sum", ["secret.txt"])).stdout.split(" ")[0];
    await Deno.writeTextFile(`${raw.jail}/sums`, `${sum}  ${raw.outside}/secret.txt\n`);
    const checked = await runRaw(raw.jail, "sha256sum", ["-c", "sums"]);
    ok(checked.stdout.includes("secret.txt: OK"), `raw sha256sum -c: ${checked.stdout}`);
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }
  await using fx = await layer1(ALLOW);
  await Deno.writeTextFile(`${fx.jail}/sums`, `0000  ${fx.outside}/secret.txt\n`);
  for (const command of ["sha256sum -c sums", "sha256sum --check sums", "sha256sum -bc sums"]) {
    await assertRefused(fx, command, "POLICY_DENIED");
  }
  equal((await fx.run("sha256sum notes.txt")).code, "OK");
});

Deno.test("layer 1 refuses git format-patch without --stdout: it names each file after a commit subject, through any link there (POLICY_DENIED)", async () => {
  const raw = await makeTree();
  try {
    await makeRepository(raw.jail);
    await Deno.symlink(`${raw.outside}/made.patch`, `${raw.jail}/0001-x.patch`);
    ok((await rawGit(raw.jail, ["format-patch", "-1"])).ok);
    ok((await Deno.readTextFile(`${raw.outside}/made.patch`)).includes("Subject: [PATCH] x"));
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }
  await using fx = await layer1(ALLOW);
  await makeRepository(fx.jail);
  await Deno.symlink(`${fx.outside}/made.patch`, `${fx.jail}/0001-x.patch`);
  for (
    const command of [
      "git format-patch -1",
      "git format-patch -o out -1",
      "git format-patch -1 -- --stdout",
    ]
  ) {
    const refused = await assertRefused(fx, command, "POLICY_DENIED");
    match(refused.policy_reason, /Use --stdout/);
  }
  const stdout = await fx.run("git format-patch -1 --stdout");
  equal(stdout.code, "OK", stdout.policy_reason);
  ok(stdout.stdout.includes("Subject: [PATCH] x"));
  equal(await Deno.stat(`${fx.outside}/made.patch`).then(() => true, () => false), false);
});

Deno.test("layer 1 refuses diff FILE DIR when DIR/FILE is a link leading out: diff compares the file with that entry (PATH_ESCAPE)", async () => {
  const plant = async (jail: string, outside: string) => {
    await Deno.writeTextFile(`${jail}/f`, "hello\n");
    await Deno.mkdir(`${jail}/d`);
    await Deno.symlink(`${outside}/secret.txt`, `${jail}/d/f`);
  };
  const raw = await makeTree();
  try {
    await plant(raw.jail, raw.outside);
    ok((await runRaw(raw.jail, "diff", ["f", "d"])).stdout.includes("TOP-SECRET-OUTSIDE"));
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }
  await using fx = await layer1(ALLOW);
  await plant(fx.jail, fx.outside);
  for (
    const command of [
      "diff f d",
      "diff d f",
      "diff -N f d",
      "diff --to-file=d f",
      "diff --from-file d f",
    ]
  ) {
    const refused = await assertRefused(fx, command, "PATH_ESCAPE");
    match(refused.policy_reason, /d\/f/);
  }
  await Deno.writeTextFile(`${fx.jail}/g`, "hello\n");
  equal((await fx.run("diff f g")).exit_code, 0);
});

Deno.test("git apply --unsafe-paths is refused by its guard: the patch names the paths (POLICY_DENIED)", async () => {
  await using fx = await layer1(ALLOW);
  await makeRepository(fx.jail);
  const patch = "--- a/../outside/victim\n+++ b/../outside/victim\n@@ -0,0 +1 @@\n+x\n";
  await Deno.writeTextFile(`${fx.jail}/fix.patch`, patch);
  for (const command of ["git apply --unsafe-paths fix.patch", "git apply --unsafe fix.patch"]) {
    const refused = await assertRefused(fx, command, "POLICY_DENIED");
    match(refused.policy_reason, /guard "git-apply-unsafe-paths"/);
  }
});
