/**
 * Attack class: reading or writing through a link inside a tree. The red
 * team's chain: a relative link made deep in the jail (where its text stays
 * inside), moved up one level with `mv` (now it leads out), then a tool that
 * follows links while it walks the tree: `grep -R`, `diff -r`, `cp -rL`,
 * `cp -r`, `find -L`, `du -L`, `ls -RL`, `tar -h`. Each argument is inside,
 * so only a walk of the tree sees the link; layer 1 walks it and refuses
 * with PATH_ESCAPE. The raw tool shows each one really follows the link.
 */
import { equal, match, ok } from "node:assert/strict";
import { assertRefused, layer1, makeTree, runRaw } from "./_layer1.ts";

const DEEP = "deep/a/b/c/d/e/f";
const UP7 = "../../../../../../../outside/secret.txt";
const MOVED = "deep/a/b/c/d/e/S";

/** Makes the link with the raw `cp -s` (htmcp refuses that) and returns the jail. */
async function plantDeepLink(jail: string): Promise<void> {
  await Deno.mkdir(`${jail}/outside`, { recursive: true });
  await Deno.writeTextFile(`${jail}/outside/secret.txt`, "inside twin\n");
  ok((await runRaw(`${jail}/${DEEP}`, "cp", ["-s", UP7, "S"])).success);
  await Deno.mkdir(`${jail}/other/a/b/c/d/e`, { recursive: true });
  await Deno.writeTextFile(`${jail}/other/a/b/c/d/e/S`, "other\n");
}

const READERS: readonly (readonly [string, (out: string, jail: string) => Promise<boolean>])[] = [
  ["grep -R TOP-SECRET deep", (out) => Promise.resolve(out.includes("TOP-SECRET-OUTSIDE"))],
  ["grep -rR TOP-SECRET", (out) => Promise.resolve(out.includes("TOP-SECRET-OUTSIDE"))],
  [
    "grep --dereference-recursive TOP-SECRET deep",
    (out) => Promise.resolve(out.includes("TOP-SECRET-OUTSIDE")),
  ],
  ["diff -rN deep/a other/a", (out) => Promise.resolve(out.includes("TOP-SECRET-OUTSIDE"))],
  [
    "cp -rL deep copy",
    async (_out, jail) =>
      (await Deno.readTextFile(`${jail}/copy/a/b/c/d/e/S`)) === "TOP-SECRET-OUTSIDE\n",
  ],
  [
    "find -L deep -name S -type f",
    (out) => Promise.resolve(out.includes("deep/a/b/c/d/e/S")),
  ],
  ["du -abL deep", (out) => Promise.resolve(/^19\s+deep\/a\/b\/c\/d\/e\/S$/m.test(out))],
  ["ls -lRL deep", (out) => Promise.resolve(/^-[rw-]{9}.* S$/m.test(out))],
  [
    "tar -chf t.tar deep",
    async (_out, jail) =>
      (await runRaw(jail, "tar", ["-xOf", "t.tar"])).stdout.includes("TOP-SECRET-OUTSIDE"),
  ],
];

for (const [command, followed] of READERS) {
  Deno.test(`layer 1 refuses ${JSON.stringify(command)} through a link moved out with mv (PATH_ESCAPE)`, async () => {
    const raw = await makeTree();
    try {
      await plantDeepLink(raw.jail);
      ok((await runRaw(raw.jail, "mv", [`${DEEP}/S`, MOVED])).success);
      const [name, ...args] = command.split(" ");
      const ran = await runRaw(raw.jail, name as string, args);
      ok(await followed(ran.stdout, raw.jail), `raw ${command} did not follow: ${ran.stdout}`);
    } finally {
      await Deno.remove(raw.base, { recursive: true });
    }

    await using fx = await layer1();
    await plantDeepLink(fx.jail);
    // The move itself is allowed: both names are inside, and the link still is.
    const moved = await fx.run(`mv ${DEEP}/S ${MOVED}`);
    equal(moved.code, "OK", moved.policy_reason);
    const result = await assertRefused(fx, command, "PATH_ESCAPE");
    match(result.policy_reason, /deep\/a\/b\/c\/d\/e\/S.*leads outside the jail/);
  });
}

Deno.test("layer 1 refuses cp -r of a tree holding a link that leads out (it would write or copy through it)", async () => {
  await using fx = await layer1();
  await plantDeepLink(fx.jail);
  equal((await fx.run(`mv ${DEEP}/S ${MOVED}`)).code, "OK");
  await assertRefused(fx, "cp -r other deep", "PATH_ESCAPE");
  await assertRefused(fx, "cp -a deep copy", "PATH_ESCAPE");
});

Deno.test("layer 1 allows the same tree tools when every link in the tree stays inside", async () => {
  await using fx = await layer1();
  await plantDeepLink(fx.jail);
  for (
    const command of [
      "grep -R inside deep",
      "find -L deep -name S",
      "du -L deep",
      "cp -rL deep copy",
    ]
  ) {
    const result = await fx.run(command);
    equal(result.code, "OK", `${command}: ${result.policy_reason}`);
  }
  equal(await Deno.readTextFile(`${fx.jail}/deep/a/b/c/d/e/f/S`), "inside twin\n");
});

Deno.test("layer 1 refuses a link to the server's own /proc entries", async () => {
  await using fx = await layer1();
  await Deno.symlink(`/proc/${Deno.pid}/environ`, `${fx.jail}/env`);
  await assertRefused(fx, "cat env", "PATH_ESCAPE");
  await assertRefused(fx, "grep -R PIN .", "PATH_ESCAPE");
});

Deno.test("raw cp -r copies a link one level up, where the same text leads outside", async () => {
  const raw = await makeTree();
  try {
    await plantDeepLink(raw.jail);
    ok((await runRaw(raw.jail, "cp", ["-r", DEEP, "deep/a/b/c/d/g"])).success);
    equal(await Deno.readTextFile(`${raw.jail}/deep/a/b/c/d/g/S`), "TOP-SECRET-OUTSIDE\n");
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }
});

for (
  const command of [
    `cp -r ${DEEP} deep/a/b/c/d/g`,
    `cp -a ${DEEP} deep/a/b/c/d/g`,
    `cp -P ${DEEP}/S deep/a/b/c/d/e/S2`,
    `cp --no-dereference ${DEEP}/S deep/a/b/c/d/e/S2`,
  ]
) {
  Deno.test(`layer 1 refuses the link-copying ${JSON.stringify(command)} (PATH_ESCAPE)`, async () => {
    await using fx = await layer1();
    await plantDeepLink(fx.jail);
    const result = await assertRefused(fx, command, "PATH_ESCAPE");
    match(result.policy_reason, /refuses copying links/);
  });
}

Deno.test("layer 1 refuses a walk over a folder holding a name that is not UTF-8 (a link to a host folder hid behind it)", async () => {
  // The red team's round six: `src/\xff -> outside`. Decoded leniently the
  // name became U+FFFD, a path that does not exist, and the walk went past
  // the link while grep -R read through it.
  const plant = async (jail: string, outside: string) => {
    await Deno.mkdir(`${jail}/src`);
    const made = await new Deno.Command("python3", {
      args: ["-c", "import os, sys; os.symlink(sys.argv[1], b'src/\\xff')", outside],
      cwd: jail,
    }).output();
    ok(made.success, new TextDecoder().decode(made.stderr));
  };
  const raw = await makeTree();
  try {
    await plant(raw.jail, raw.outside);
    const ran = await runRaw(raw.jail, "grep", ["-R", "TOP-SECRET", "src"]);
    ok(ran.stdout.includes("TOP-SECRET-OUTSIDE"), `raw grep -R did not follow: ${ran.stdout}`);
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }

  await using fx = await layer1();
  await plant(fx.jail, fx.outside);
  for (
    const command of ["grep -R TOP-SECRET src", "find -L src -name secret.txt", "cp -rL src copy"]
  ) {
    const result = await assertRefused(fx, command, "PATH_ESCAPE");
    match(result.policy_reason, /not UTF-8/);
  }
});
