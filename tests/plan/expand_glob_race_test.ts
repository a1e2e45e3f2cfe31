/**
 * Glob expansion lists folders with the server's own rights, outside any
 * sandbox. The red team's race: a folder `d` renamed to and from a link to a
 * host folder as fast as a process can, while `echo d/.*` is expanded; the
 * expansion resolved the path, then listed it by name, and handed the host
 * folder's names to the model (under bwrap too). The server's executor now
 * lists through its helper, by descriptor (openat2 beneath the jail, no
 * link followed); without an executor (the operator's CLI) the listing goes
 * by the real path, twice, each checked link-free before and after.
 */
import { equal, ok } from "node:assert/strict";
import { expandGlob } from "../../src/plan/expand_glob.ts";
import { startRenameLoop } from "../_helpers/rename_loop.ts";
import {
  CheckBudget,
  type FolderLister,
  MAX_PATH_LOOKUPS,
  PATH_CHECK_DEADLINE_MS,
} from "../../src/jail/mod.ts";
import { ServingHelper } from "../../src/exec/serving_helper.ts";
import { helperFolderLister } from "../../src/exec/list_beneath.ts";
import { DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/launcher.ts";

/** Runs `echo d/.*` expansions while `d` is swapped for a link to a host folder; the outcomes. */
async function raceGlob(lister: FolderLister | null): Promise<Map<string, number>> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-globrace-" }));
  const jail = `${base}/jail`;
  const host = `${base}/host`;
  await Deno.mkdir(`${jail}/d/.inside`, { recursive: true });
  await Deno.mkdir(host);
  await Deno.writeTextFile(`${host}/.host-name-CANARY`, "");
  const loop = await startRenameLoop(jail, "d", "l", host);
  const outcomes = new Map<string, number>();
  try {
    const word = { text: "d/.*", quoted: false, globAt: [3] };
    const started = Date.now();
    for (let i = 0; i < 20_000 && Date.now() - started < 4_000; i++) {
      const budget = new CheckBudget(PATH_CHECK_DEADLINE_MS, MAX_PATH_LOOKUPS, lister);
      const expanded = await expandGlob(jail, jail, word, budget);
      const key = expanded.ok ? expanded.words.join(" ") : expanded.reason;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
  } finally {
    await loop.stop();
    await Deno.remove(base, { recursive: true });
  }
  return outcomes;
}

Deno.test("while a folder is swapped for a link to a host folder, the server's listing (by descriptor, through the helper) never shows the host folder", async () => {
  const helper = new ServingHelper(DEFAULT_LAUNCHER_TOOLS.spawn);
  try {
    const outcomes = await raceGlob(helperFolderLister(helper));
    const leaked = [...outcomes.keys()].filter((key) => key.includes("CANARY"));
    equal(leaked.length, 0, `the host folder was listed: ${JSON.stringify([...outcomes])}`);
    ok(outcomes.has("d/.inside"), JSON.stringify([...outcomes]));
    // The swap did land: some listings met the link and refused.
    ok(
      [...outcomes.keys()].some((key) => key.includes("reached through a link")),
      JSON.stringify([...outcomes]),
    );
  } finally {
    await helper.close();
  }
});

Deno.test("in this process (the CLI's checks), the listing is bracketed: it sees and refuses swaps, and never quotes a host name", async () => {
  const outcomes = await raceGlob(null);
  // What the in-process listing cannot promise (SECURITY.md): a swap in and
  // out inside both listings, measured at about 1 expansion in 400 under
  // this loop (the red team saw 1 call in 25 leak before).
  const refusals = [...outcomes.keys()].filter((key) => key.startsWith("The pattern"));
  ok(
    refusals.some((key) => /reached through a link|changed while it was listed/.test(key)),
    JSON.stringify([...outcomes]),
  );
  equal(refusals.filter((key) => key.includes("CANARY")).length, 0);
  ok(outcomes.has("d/.inside"), JSON.stringify([...outcomes]));
});

Deno.test("glob expansion spends the call's check budget: a pattern over more entries than it allows is refused", async () => {
  const jail = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-globbudget-" }));
  try {
    await Deno.mkdir(`${jail}/big`);
    for (let i = 0; i < 300; i++) await Deno.writeTextFile(`${jail}/big/f${i}`, "");
    const word = { text: "big/q*", quoted: false, globAt: [5] };
    ok((await expandGlob(jail, jail, word, new CheckBudget(5_000, 1_000))).ok);
    const refused = await expandGlob(jail, jail, word, new CheckBudget(5_000, 100));
    ok(!refused.ok);
    ok(refused.reason.includes("100 filesystem lookups"), refused.reason);
    const late = await expandGlob(jail, jail, word, new CheckBudget(-1, 1_000));
    ok(!late.ok && late.reason.includes("did not finish"), JSON.stringify(late));
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});
