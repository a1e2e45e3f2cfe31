/**
 * Attack class: the model creating links. A symlink whose text resolves
 * inside where it is made leads outside once moved; a hard link to a file
 * reached through such a link keeps a host file under a jail name; an
 * archive extracts whatever links it holds. Layer 1 refuses `cp -s`,
 * `cp -l` (in any cluster or abbreviation) and, without the kernel sandbox,
 * `tar -x`, each with POLICY_DENIED; the raw tool shows each one works.
 */
import { equal, match, ok } from "node:assert/strict";
import { assertRefused, layer1, makeTree, runRaw } from "./_layer1.ts";

const DEEP = "deep/a/b/c/d/e/f";
/** Seven levels up from DEEP is the jail; from one level higher it is the jail's parent. */
const UP7 = "../../../../../../../outside/secret.txt";

async function plantInsideTwin(jail: string) {
  await Deno.mkdir(`${jail}/outside`, { recursive: true });
  await Deno.writeTextFile(`${jail}/outside/secret.txt`, "inside twin\n");
}

Deno.test("raw cp -s makes a link that leads outside once mv moves it one level up", async () => {
  const tree = await makeTree();
  try {
    await plantInsideTwin(tree.jail);
    ok((await runRaw(`${tree.jail}/${DEEP}`, "cp", ["-s", UP7, "S"])).success);
    equal(await Deno.readTextFile(`${tree.jail}/${DEEP}/S`), "inside twin\n");
    ok((await runRaw(tree.jail, "mv", [`${DEEP}/S`, "deep/a/b/c/d/e/S"])).success);
    equal(await Deno.readTextFile(`${tree.jail}/deep/a/b/c/d/e/S`), "TOP-SECRET-OUTSIDE\n");
  } finally {
    await Deno.remove(tree.base, { recursive: true });
  }
});

const CP_LINKS: readonly string[] = [
  `cp -s ${UP7} S`,
  `cp --symbolic-link ${UP7} S`,
  `cp --sym ${UP7} S`,
  `cp -vs ${UP7} S`,
  "cp -l ../../../../../../../notes.txt H",
  "cp --link ../../../../../../../notes.txt H",
  "cp -rlL ../../../../../../../deep/a/b/c/d/e/f H",
  "cp -al ../../../../../../../notes.txt H",
];

for (const command of CP_LINKS) {
  Deno.test(`layer 1 refuses the link-making ${JSON.stringify(command)} with POLICY_DENIED`, async () => {
    await using fx = await layer1();
    await plantInsideTwin(fx.jail);
    const result = await assertRefused(fx, command, "POLICY_DENIED", DEEP);
    match(result.policy_reason, /create links instead of copies/);
  });
}

Deno.test("raw cp -l leaves a second name for a file (a hard link)", async () => {
  const tree = await makeTree();
  try {
    ok((await runRaw(tree.jail, "cp", ["-l", "notes.txt", "H"])).success);
    equal((await Deno.lstat(`${tree.jail}/notes.txt`)).nlink, 2);
  } finally {
    await Deno.remove(tree.base, { recursive: true });
  }
});

/** An archive holding `leak -> ../outside/secret.txt`, made outside the jail under test. */
async function leakyArchive(into: string): Promise<void> {
  const maker = await makeTree();
  try {
    await Deno.symlink("../outside/secret.txt", `${maker.jail}/leak`);
    ok((await runRaw(maker.jail, "tar", ["-cf", `${into}/t.tar`, "leak"])).success);
  } finally {
    await Deno.remove(maker.base, { recursive: true });
  }
}

Deno.test("raw tar -x extracts a member link that leads outside", async () => {
  const tree = await makeTree();
  try {
    await leakyArchive(tree.jail);
    ok((await runRaw(tree.jail, "tar", ["-xf", "t.tar"])).success);
    equal(await Deno.readTextFile(`${tree.jail}/leak`), "TOP-SECRET-OUTSIDE\n");
  } finally {
    await Deno.remove(tree.base, { recursive: true });
  }
});

for (
  const command of ["tar -xf t.tar", "tar xf t.tar", "tar --extract -f t.tar", "tar -xvf t.tar"]
) {
  Deno.test(`layer 1 refuses ${JSON.stringify(command)} without the kernel sandbox (POLICY_DENIED)`, async () => {
    await using fx = await layer1();
    await leakyArchive(fx.jail);
    const result = await assertRefused(fx, command, "POLICY_DENIED");
    match(result.policy_reason, /without the kernel sandbox htmcp refuses extraction/);
  });
}

Deno.test("layer 1 still lists an archive and copies files without links", async () => {
  await using fx = await layer1();
  await leakyArchive(fx.jail);
  for (const command of ["tar -tf t.tar", "cp notes.txt copy.txt", "cp -p notes.txt kept.txt"]) {
    const result = await fx.run(command);
    equal(result.code, "OK", `${command}: ${result.policy_reason}`);
  }
  equal(await Deno.readTextFile(`${fx.jail}/copy.txt`), "notes\n");
});

Deno.test("raw tar -T archives a host file named only inside a list file", async () => {
  const tree = await makeTree();
  try {
    await Deno.writeTextFile(`${tree.jail}/list`, `${tree.outside}/secret.txt\n`);
    ok((await runRaw(tree.jail, "tar", ["-cf", "t.tar", "-T", "list"])).success);
    const listed = await runRaw(tree.jail, "tar", ["-xOf", "t.tar"]);
    ok(listed.stdout.includes("TOP-SECRET-OUTSIDE"));
  } finally {
    await Deno.remove(tree.base, { recursive: true });
  }
});

Deno.test("layer 1 refuses tar -T and du --files0-from without the kernel sandbox (POLICY_DENIED)", async () => {
  await using fx = await layer1();
  await Deno.writeTextFile(`${fx.jail}/list`, `${fx.outside}/secret.txt\n`);
  for (const command of ["tar -cf t.tar -T list", "du --files0-from=list"]) {
    const result = await assertRefused(fx, command, "POLICY_DENIED");
    // The guard (tar-files-from, files0-from) or the path model: either says why.
    match(result.policy_reason, /read the paths it opens from a file|from a file|files0-from/);
  }
});
