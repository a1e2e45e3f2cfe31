/**
 * Attack class: paths the check cannot resolve, which used to be judged as
 * "missing" and then lexically. A real folder chain deeper than PATH_MAX
 * with a link at its bottom: `lstat` of the whole path fails with
 * ENAMETOOLONG, while `mkdir -p` walks it one component at a time and goes
 * through the link. Layer 1 refuses such a path with PATH_ESCAPE, and a
 * symlink loop too.
 */
import { exists } from "../_helpers/exists.ts";
import { equal, match, ok } from "node:assert/strict";
import { assertRefused, layer1, makeTree, runRaw } from "./_layer1.ts";

/** 18 folders of 240 characters: over 4096 bytes below the jail. */
const SEGMENT = "p".repeat(240);
const CHAIN = Array.from({ length: 18 }, () => SEGMENT).join("/");

/** Built one component at a time (as `mkdir -p` and `cd` do): no single call names the whole path. */
async function buildChain(jail: string, outside: string): Promise<void> {
  const steps = Array.from({ length: 18 }, () => `mkdir ${SEGMENT} && cd -P ${SEGMENT}`).join(
    " && ",
  );
  const built = await new Deno.Command("sh", {
    args: ["-c", `cd "$1" && ${steps} && ln -s "$2" out`, "sh", jail, outside],
    stdout: "null",
    stderr: "piped",
  }).output();
  ok(built.success, new TextDecoder().decode(built.stderr));
}

Deno.test("raw mkdir -p goes through a link below a path longer than PATH_MAX", async () => {
  const tree = await makeTree();
  try {
    await buildChain(tree.jail, tree.outside);
    const ran = await runRaw(tree.jail, "mkdir", ["-p", `${CHAIN}/out/made-by-mkdir`]);
    ok(ran.success, ran.stderr);
    ok(await exists(`${tree.outside}/made-by-mkdir`), "the folder landed outside");
  } finally {
    await Deno.remove(tree.base, { recursive: true });
  }
});

Deno.test("layer 1 refuses a path through a link below PATH_MAX's reach (PATH_ESCAPE, not 'missing')", async () => {
  await using fx = await layer1(["mkdir", "cat"]);
  await buildChain(fx.jail, fx.outside);
  const result = await assertRefused(fx, `mkdir -p ${CHAIN}/out/made-by-mkdir`, "PATH_ESCAPE");
  match(result.policy_reason, /too long to resolve/);
  equal(await exists(`${fx.outside}/made-by-mkdir`), false);
});

Deno.test("layer 1 refuses a symlink loop and a name over NAME_MAX inside a path (PATH_ESCAPE)", async () => {
  await using fx = await layer1(["mkdir", "cat"]);
  await Deno.symlink("loop-b", `${fx.jail}/loop-a`);
  await Deno.symlink("loop-a", `${fx.jail}/loop-b`);
  const loop = await assertRefused(fx, "cat loop-a/x", "PATH_ESCAPE");
  match(loop.policy_reason, /levels of symbolic links/);
  const long = await assertRefused(fx, `mkdir -p deep/${"n".repeat(300)}/x`, "PATH_ESCAPE");
  match(long.policy_reason, /too long/);
});
