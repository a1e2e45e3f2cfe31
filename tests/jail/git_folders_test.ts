import { deepEqual } from "node:assert/strict";
import { gitFolderHolding } from "../../src/jail/git_folders.ts";
import { CheckBudget } from "../../src/jail/budget.ts";

async function withJail(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-gitfolders-" }));
  try {
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("gitFolderHolding() finds a .git segment by name, in any case, whether or not the path exists", async () => {
  await withJail(async (root) => {
    for (const path of ["repo/.git/MERGE_RR", "repo/.GIT/x/y", "a/.git"]) {
      const folder = path.slice(0, path.toLowerCase().indexOf(".git") + 4);
      deepEqual(await gitFolderHolding(root, `${root}/${path}`, new CheckBudget()), {
        ok: true,
        folder: `${root}/${folder}`,
      });
    }
  });
});

Deno.test("gitFolderHolding() finds a folder by git's marks: HEAD, commondir, or objects with refs", async () => {
  await withJail(async (root) => {
    await Deno.mkdir(`${root}/h`);
    await Deno.writeTextFile(`${root}/h/HEAD`, "");
    await Deno.mkdir(`${root}/c`);
    await Deno.writeTextFile(`${root}/c/commondir`, "");
    await Deno.mkdir(`${root}/o/objects`, { recursive: true });
    await Deno.mkdir(`${root}/o/refs`);
    for (const name of ["h", "c", "o"]) {
      deepEqual(await gitFolderHolding(root, `${root}/${name}/new/file`, new CheckBudget()), {
        ok: true,
        folder: `${root}/${name}`,
      });
    }
  });
});

Deno.test("gitFolderHolding() leaves work trees and half-marked folders alone", async () => {
  await withJail(async (root) => {
    await Deno.mkdir(`${root}/repo/.git`, { recursive: true });
    await Deno.mkdir(`${root}/objects-only/objects`, { recursive: true });
    for (const path of ["repo", "repo/src/main.ts", "objects-only/x", "missing/y"]) {
      deepEqual(await gitFolderHolding(root, `${root}/${path}`, new CheckBudget()), {
        ok: true,
        folder: null,
      });
    }
  });
});

Deno.test("gitFolderHolding() refuses rather than passes when its lookups run out", async () => {
  await withJail(async (root) => {
    await Deno.mkdir(`${root}/a/b`, { recursive: true });
    const verdict = await gitFolderHolding(root, `${root}/a/b`, new CheckBudget(5_000, 1));
    deepEqual(verdict.ok, false);
  });
});
