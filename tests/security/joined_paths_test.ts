/**
 * Attack class: paths a tool composes from two arguments that are each
 * inside the jail: `cp --parents SRC DIR` (writes DIR/SRC), `cp -t DIR SRC`
 * and `cp SRC DIR` (write DIR/basename(SRC) through a link standing there),
 * `tar -C`, `git -C`, `make -C` (every later path starts from the new
 * folder, and a bare name that exists only there names a path too), and a
 * folder-changing flag of a tool htmcp has no model of (refused).
 *
 * Each case first shows the attack against the raw tool, then that htmcp
 * refuses it in sandbox mode "none" (layer 1 alone) with the exact code,
 * with nothing changed anywhere and the attempt audited.
 */
import { equal, match, ok } from "node:assert/strict";
import { assertRefused, layer1, makeTree, runRaw } from "./_layer1.ts";

interface Case {
  readonly what: string;
  /** Builds the tree the attack needs under `base` (jail and outside exist). */
  setup(tree: { base: string; jail: string; outside: string }): Promise<void>;
  readonly cwd: string;
  readonly command: string;
  /** Proof against the raw tool: true when the attack reached outside. */
  escaped(raw: { stdout: string }, tree: { outside: string }): Promise<boolean>;
  readonly code: string;
  readonly reason: RegExp;
}

const plantedFile = async (tree: { jail: string }) => {
  await Deno.mkdir(`${tree.jail}/outside`);
  await Deno.writeTextFile(`${tree.jail}/outside/secret.txt`, "PWNED\n");
};
const secretChanged = async (_raw: unknown, tree: { outside: string }) =>
  (await Deno.readTextFile(`${tree.outside}/secret.txt`)) !== "TOP-SECRET-OUTSIDE\n";

const CASES: readonly Case[] = [
  {
    what: "cp --parents SRC DIR whose join leaves",
    setup: plantedFile,
    cwd: "deep",
    command: "cp --parents ../outside/secret.txt ..",
    escaped: secretChanged,
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
  {
    what: "cp --parents with an abbreviated option and -t",
    setup: plantedFile,
    cwd: "deep",
    command: "cp --par -t .. ../outside/secret.txt",
    escaped: secretChanged,
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
  {
    what: "cp -t DIR writing through a link at DIR/basename(SRC)",
    setup: async (tree) => {
      await Deno.mkdir(`${tree.jail}/drop`);
      await Deno.symlink(`${tree.outside}/secret.txt`, `${tree.jail}/drop/notes.txt`);
    },
    cwd: "",
    command: "cp -t drop notes.txt",
    escaped: secretChanged,
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
  {
    what: "--target-directory=DIR writing through a link",
    setup: async (tree) => {
      await Deno.mkdir(`${tree.jail}/drop`);
      await Deno.symlink(`${tree.outside}/secret.txt`, `${tree.jail}/drop/notes.txt`);
    },
    cwd: "",
    command: "cp --target-directory=drop notes.txt",
    escaped: secretChanged,
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
  {
    what: "cp SRC DIR writing through a link at DIR/basename(SRC)",
    setup: async (tree) => {
      await Deno.mkdir(`${tree.jail}/drop`);
      await Deno.symlink(`${tree.outside}/secret.txt`, `${tree.jail}/drop/notes.txt`);
    },
    cwd: "",
    command: "cp notes.txt drop",
    escaped: secretChanged,
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
  {
    what: "tar -C .. reading a path that is inside only from the cwd",
    setup: async () => {},
    cwd: "deep",
    command: "tar -C .. -cf t.tar ../outside/secret.txt",
    escaped: async (_raw, tree) => {
      const listed = await runRaw(`${tree.outside}/../jail/deep`, "tar", ["-xOf", "t.tar"]);
      return listed.stdout.includes("TOP-SECRET-OUTSIDE");
    },
    code: "PATH_ESCAPE",
    reason: /from the folder "\.\."/,
  },
  {
    what: "tar -C chained (each one relative to the previous)",
    setup: async () => {},
    cwd: "deep",
    command: "tar -C a -C ../.. -cf t.tar ../outside/secret.txt",
    escaped: async (_raw, tree) => {
      const listed = await runRaw(`${tree.outside}/../jail/deep`, "tar", ["-xOf", "t.tar"]);
      return listed.stdout.includes("TOP-SECRET-OUTSIDE");
    },
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
  {
    what: "tar --directory= with a name that exists only under that folder",
    setup: async (tree) => {
      await Deno.mkdir(`${tree.jail}/sub`);
      await Deno.symlink(tree.outside, `${tree.jail}/sub/leak`);
    },
    cwd: "",
    command: "tar --directory=sub -chf t.tar leak",
    escaped: async (_raw, tree) => {
      const listed = await runRaw(`${tree.outside}/../jail`, "tar", ["-xOf", "t.tar"]);
      return listed.stdout.includes("TOP-SECRET-OUTSIDE");
    },
    code: "PATH_ESCAPE",
    reason: /leak/,
  },
  {
    what: "git -C .. diff --no-index of a path outside",
    setup: async () => {},
    cwd: "deep",
    command: "git -C .. diff --no-index ../outside/secret.txt notes.txt",
    escaped: (raw) => Promise.resolve(raw.stdout.includes("TOP-SECRET-OUTSIDE")),
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
  {
    what: "git -C .. --work-tree=../outside (a work tree that is inside only from the cwd)",
    setup: async (tree) => {
      const git = (...args: string[]) => runRaw(tree.jail, "git", args);
      await Deno.mkdir(`${tree.jail}/repo`);
      await Deno.writeTextFile(`${tree.jail}/repo/secret.txt`, "committed\n");
      ok((await git("-C", "repo", "init", "-q")).success);
      ok((await git("-C", "repo", "add", "secret.txt")).success);
    },
    cwd: "deep",
    command: "git -C .. --git-dir=repo/.git --work-tree=../outside diff",
    escaped: (raw) => Promise.resolve(raw.stdout.includes("+TOP-SECRET-OUTSIDE")),
    code: "PATH_ESCAPE",
    reason: /folder change "\.\.\/outside"/,
  },
  {
    what: "make -C .. -f of a makefile outside",
    setup: async (tree) => {
      await Deno.writeTextFile(`${tree.outside}/Makefile`, "all:\n\t@echo OUTSIDE-MAKEFILE-RAN\n");
    },
    cwd: "deep",
    command: "make -C .. -f ../outside/Makefile",
    escaped: (raw) => Promise.resolve(raw.stdout.includes("OUTSIDE-MAKEFILE-RAN")),
    code: "PATH_ESCAPE",
    reason: /outside the jail/,
  },
];

for (const item of CASES) {
  Deno.test(`layer 1 refuses ${item.what} (${item.code}), and the raw tool escapes`, async () => {
    // The attack is real: the tool itself, unchecked, reaches outside.
    const raw = await makeTree();
    try {
      await item.setup(raw);
      const [name, ...args] = item.command.split(" ");
      const ran = await runRaw(`${raw.jail}/${item.cwd}`, name as string, args);
      ok(await item.escaped(ran, raw), `raw ${item.command} did not escape: ${ran.stderr}`);
    } finally {
      await Deno.remove(raw.base, { recursive: true });
    }

    await using fx = await layer1();
    await item.setup(fx);
    const result = await assertRefused(fx, item.command, item.code, item.cwd || undefined);
    match(result.policy_reason, item.reason);
    equal(await Deno.readTextFile(`${fx.outside}/secret.txt`), "TOP-SECRET-OUTSIDE\n");
  });
}

Deno.test("layer 1 refuses a folder-changing flag of a tool it has no model of (POLICY_DENIED)", async () => {
  // The flag really decides where the tool writes: install puts the copy there.
  const raw = await makeTree();
  try {
    await Deno.mkdir(`${raw.jail}/drop`);
    const ran = await runRaw(raw.jail, "install", ["--target-directory=drop", "notes.txt"]);
    ok(ran.success, ran.stderr);
    equal(await Deno.readTextFile(`${raw.jail}/drop/notes.txt`), "notes\n");
  } finally {
    await Deno.remove(raw.base, { recursive: true });
  }
  await using fx = await layer1(["install", "cat"]);
  await Deno.mkdir(`${fx.jail}/drop`);
  for (const command of ["install --target-directory=drop notes.txt", "install --chdir x y"]) {
    const result = await assertRefused(fx, command, "POLICY_DENIED");
    match(result.policy_reason, /no model of how "install" resolves paths/);
  }
});

Deno.test("layer 1 still allows the same tools when every composed path stays inside", async () => {
  await using fx = await layer1();
  await Deno.mkdir(`${fx.jail}/drop`);
  for (
    const [command, cwd] of [
      ["cp --parents notes.txt drop", undefined],
      ["cp -t drop notes.txt", undefined],
      ["tar -C deep -cf t.tar a", undefined],
      ["tar -C .. -tf t.tar", "deep"],
      ["git -C deep status --porcelain", undefined],
      ["ls --directory deep", undefined],
    ] as const
  ) {
    const explained = await fx.explain(command, cwd);
    equal(explained.code, "OK", `${command}: ${explained.policy_reason}`);
  }
});
