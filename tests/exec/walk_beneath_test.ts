/**
 * The repository check searches whole work trees for nested repositories.
 * Through the server's helper that is one call (`htmcp-spawn
 * --walk-beneath`), by descriptor as the folder listing is; in the
 * operator's CLI it is a listing per folder (`walkTree`'s fallback). Both
 * report the same links and `.git` entries, never follow a link, never
 * descend into a `.git`, refuse a tree too large or a name that is not
 * UTF-8, and, under a folder swapped for a link to a host folder, never
 * report a host path.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { CheckBudget, MAX_PATH_LOOKUPS, walkTree } from "../../src/jail/mod.ts";
import { ServingHelper } from "../../src/exec/serving_helper.ts";
import { helperFolderLister, parseWalk } from "../../src/exec/list_beneath.ts";
import { DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/launcher.ts";
import { startRenameLoop } from "../_helpers/rename_loop.ts";

async function withHelper(fn: (helper: ServingHelper) => Promise<void>): Promise<void> {
  const helper = new ServingHelper(DEFAULT_LAUNCHER_TOOLS.spawn);
  try {
    await fn(helper);
  } finally {
    await helper.close();
  }
}

async function tree(): Promise<{ base: string; jail: string }> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-walk-" }));
  const jail = `${base}/jail`;
  await Deno.mkdir(`${jail}/w/a/b/sub/.git/objects`, { recursive: true });
  await Deno.mkdir(`${jail}/w/.git/refs`, { recursive: true });
  await Deno.mkdir(`${jail}/w/c/.GIT/d`, { recursive: true });
  await Deno.writeTextFile(`${jail}/w/c/.GIT/d/.git`, "gitdir: ../../../.git\n");
  await Deno.mkdir(`${base}/host/.git`, { recursive: true });
  await Deno.symlink(`${base}/host`, `${jail}/w/out`);
  await Deno.symlink("a", `${jail}/w/in`);
  await Deno.writeTextFile(`${jail}/w/a/file.txt`, "x");
  return { base, jail };
}

const sorted = (listing: { links: readonly string[]; gits: readonly string[] }) => ({
  links: [...listing.links].sort(),
  gits: [...listing.gits].sort(),
});

Deno.test("the helper's walk and the in-process walk report the same links and .git entries, following no link", async () => {
  const { base, jail } = await tree();
  try {
    await withHelper(async (helper) => {
      const lister = helperFolderLister(helper);
      const byHelper = await walkTree(jail, `${jail}/w`, new CheckBudget(5_000, 100_000, lister));
      const inProcess = await walkTree(jail, `${jail}/w`, new CheckBudget(5_000, 100_000, null));
      ok(byHelper.ok && inProcess.ok, JSON.stringify([byHelper, inProcess]));
      const expected = {
        links: [`${jail}/w/in`, `${jail}/w/out`],
        gits: [`${jail}/w/.git`, `${jail}/w/a/b/sub/.git`, `${jail}/w/c/.GIT/d/.git`],
      };
      deepEqual(sorted(byHelper), expected);
      deepEqual(sorted(inProcess), expected);
      // Into .git folders too (a search for links): a link planted in one is found.
      await Deno.symlink("/etc", `${jail}/w/.git/refs/out`);
      const into = [true, false].map((inHelper) =>
        walkTree(jail, `${jail}/w`, new CheckBudget(5_000, 100_000, inHelper ? lister : null), true)
      );
      for (const walked of await Promise.all(into)) {
        ok(walked.ok, JSON.stringify(walked));
        deepEqual(sorted(walked).links, [
          `${jail}/w/.git/refs/out`,
          `${jail}/w/in`,
          `${jail}/w/out`,
        ]);
      }
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the helper's walk refuses a missing folder, a tree over its bound and a name that is not UTF-8", async () => {
  const { base, jail } = await tree();
  try {
    await withHelper(async (helper) => {
      const lister = helperFolderLister(helper);
      const budget = () => new CheckBudget(5_000, MAX_PATH_LOOKUPS, lister);
      const missing = await walkTree(jail, `${jail}/nothing`, budget());
      ok(!missing.ok && /is not there/.test(missing.why), JSON.stringify(missing));
      const tooSmall = await walkTree(jail, `${jail}/w`, new CheckBudget(5_000, 3, lister));
      ok(!tooSmall.ok, "a budget of three lookups cannot walk the tree");
      const made = await new Deno.Command("python3", {
        // A repository under it: reported by a path that is not UTF-8, so refused, never missed.
        args: ["-c", `import os; os.makedirs(b"${jail}/w/a/\\xff/.git")`],
      }).output();
      equal(made.code, 0, "setup: a folder whose name is not UTF-8");
      const notUtf8 = await walkTree(jail, `${jail}/w`, budget());
      ok(!notUtf8.ok && /not UTF-8/.test(notUtf8.why), JSON.stringify(notUtf8));
      const inProcess = await walkTree(jail, `${jail}/w`, new CheckBudget(5_000, 100_000, null));
      ok(!inProcess.ok && /not UTF-8/.test(inProcess.why), JSON.stringify(inProcess));
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("parseWalk() reads links and .git entries and refuses anything else", () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  deepEqual(parseWalk(encode("lw/in\0gw/.git\0")), { links: ["w/in"], gits: ["w/.git"] });
  deepEqual(parseWalk(new Uint8Array()), { links: [], gits: [] });
  equal(parseWalk(encode("dw/a\0")), null);
  equal(parseWalk(encode("l../x\0")), null);
  equal(parseWalk(encode("l/etc\0")), null);
  equal(parseWalk(encode("lw/in")), null);
});

Deno.test("while a folder of the tree is swapped for a link to a host folder, the helper's walk never reports a host path", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-walkrace-" }));
  const jail = `${base}/jail`;
  const host = `${base}/host`;
  await Deno.mkdir(`${jail}/w/d/inside`, { recursive: true });
  await Deno.mkdir(`${host}/CANARY/.git`, { recursive: true });
  const loop = await startRenameLoop(`${jail}/w`, "d", "l", host);
  const outcomes = new Map<string, number>();
  try {
    await withHelper(async (helper) => {
      const lister = helperFolderLister(helper);
      const started = Date.now();
      for (let i = 0; i < 5_000 && Date.now() - started < 3_000; i++) {
        const walked = await walkTree(jail, `${jail}/w`, new CheckBudget(5_000, 100_000, lister));
        const key = walked.ok ? JSON.stringify(sorted(walked)) : walked.why;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    });
  } finally {
    await loop.stop();
    await Deno.remove(base, { recursive: true });
  }
  const keys = [...outcomes.keys()];
  equal(keys.filter((key) => key.includes("CANARY")).length, 0, JSON.stringify(keys));
  ok(keys.some((key) => key.includes(`${jail}/w/l`)), `the swap was seen: ${JSON.stringify(keys)}`);
});
