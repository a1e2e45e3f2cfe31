/**
 * The jail's link-free open, by which the server itself reads files a
 * command may have written (file links, the repository check): no link at
 * any component, and none swapped in while it opens. The server reads with
 * its own rights, outside any sandbox, so a read through a link would reach
 * host files (a red-team finding: a rename loop in the jail made the
 * repository check read, and quote, a root-only host file).
 */
import { equal, ok } from "node:assert/strict";
import { openRegularInJail } from "../../src/jail/mod.ts";
import { gitRepositoryReader } from "../../src/jail/git_repository_reader.ts";
import { inspectGitRepository } from "../../src/policy/mod.ts";
import { startRenameLoop } from "../_helpers/rename_loop.ts";

async function tree() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-open-" }));
  await Deno.mkdir(`${base}/jail/d`, { recursive: true });
  await Deno.mkdir(`${base}/outside`);
  await Deno.writeTextFile(`${base}/jail/d/f`, "inside\n");
  await Deno.writeTextFile(`${base}/outside/f`, "HOST-SECRET\n");
  return { base, jail: `${base}/jail`, outside: `${base}/outside` };
}

Deno.test("openRegularInJail() opens a regular file and refuses a link at the end or on the way, a folder and nothing", async () => {
  const t = await tree();
  try {
    const opened = await openRegularInJail(t.jail, `${t.jail}/d/f`);
    ok(opened.ok);
    equal(opened.size, 7);
    opened.file.close();
    await Deno.symlink(`${t.outside}/f`, `${t.jail}/l`);
    await Deno.symlink(t.outside, `${t.jail}/ld`);
    await Deno.symlink("d", `${t.jail}/inward`);
    for (
      const [path, kind] of [["l", "symlink"], ["ld/f", "symlink"], ["inward/f", "symlink"], [
        "d",
        "folder",
      ], ["nothing", "missing"]]
    ) {
      const refused = await openRegularInJail(t.jail, `${t.jail}/${path}`);
      ok(!refused.ok, path);
      equal(refused.kind, kind, path);
    }
  } finally {
    await Deno.remove(t.base, { recursive: true });
  }
});

Deno.test("while a folder of the git folder is swapped for a link to a host folder, the repository check never quotes the host file it may read", async () => {
  const t = await tree();
  // The red team's race: `.git/rebase-merge` renamed to and from a link to a
  // host folder whose `strategy` holds a secret, as fast as a process can.
  await Deno.mkdir(`${t.jail}/.git/rebase-merge`, { recursive: true });
  await Deno.writeTextFile(`${t.jail}/.git/HEAD`, "ref: refs/heads/main\n");
  await Deno.writeTextFile(`${t.jail}/.git/config`, "[core]\n\tbare = false\n");
  await Deno.writeTextFile(`${t.jail}/.git/rebase-merge/strategy`, "ours\n");
  await Deno.writeTextFile(`${t.outside}/strategy`, "HOST-SECRET\n");
  const loop = await startRenameLoop(`${t.jail}/.git`, "rebase-merge", "rl", t.outside);
  const reasons = new Map<string, number>();
  try {
    const reader = gitRepositoryReader(t.jail);
    const started = Date.now();
    for (let i = 0; i < 20_000 && Date.now() - started < 4_000; i++) {
      const verdict = await inspectGitRepository(
        { jailRoot: t.jail, cwd: t.jail, args: ["rebase", "--continue"] },
        reader,
      );
      const key = verdict.ok ? "ok" : verdict.reason;
      reasons.set(key, (reasons.get(key) ?? 0) + 1);
    }
  } finally {
    await loop.stop();
    await Deno.remove(t.base, { recursive: true });
  }
  const quoted = [...reasons.keys()].filter((reason) => reason.includes("HOST-SECRET"));
  equal(quoted.length, 0, `a refusal quoted the host file: ${quoted[0]}`);
  // The swap did land: some checks met the link and refused.
  ok(reasons.size > 1, JSON.stringify([...reasons]));
});
