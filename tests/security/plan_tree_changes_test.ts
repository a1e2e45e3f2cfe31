/**
 * Attack class (mode none): one command line whose later step uses paths an
 * earlier step changes. Every step is checked before any runs, so in `mv
 * d1 d2 && cat d2/r` the path `d2/r` did not exist when it was checked and
 * counted as inside, while `d1/r` is a link leading out: the raw shell reads
 * the host file. Without the kernel sandbox layer 1 now refuses a plan in
 * which anything follows, or runs beside, a step that may rename files or
 * make links (POLICY_DENIED, nothing of the plan runs); the same steps sent
 * as separate calls are each checked against the files as they are then.
 */
import { equal, match, ok } from "node:assert/strict";
import { assertRefused, layer1, makeTree } from "./_layer1.ts";
import { DEFAULT_CHILD_PATH } from "../../src/config/types.ts";
import { chownTree } from "../_helpers/jail.ts";

async function plantLink(jail: string, outside: string): Promise<void> {
  await Deno.mkdir(`${jail}/d1`);
  // The jail's owner runs the commands: the folder is theirs, so mv may move it.
  await chownTree(`${jail}/d1`);
  await Deno.symlink(`${outside}/secret.txt`, `${jail}/d1/r`);
  // Inside where it is made (jail/d1/../outside is jail/outside), out once moved up one level.
  await Deno.symlink("../outside/secret.txt", `${jail}/d1/up`);
}

async function rawShell(cwd: string, line: string): Promise<string> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", line],
    cwd,
    clearEnv: true,
    env: { PATH: DEFAULT_CHILD_PATH },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

const PLANS: readonly (readonly [string, string])[] = [
  ["mv d1 d2 && cat d2/r", "runs after"],
  ["mv d1 d2 ; head -c 100 d2/r", "runs after"],
  ["mv d1/up up && cat up", "runs after"],
  ["cat d2/r | mv d1 d2", "at the same time"],
  ["mv d1 d2 | cat d2/r", "at the same time"],
];

for (const [line, why] of PLANS) {
  Deno.test(`layer 1 refuses ${JSON.stringify(line)}: a later or parallel step's paths may change under a mv (POLICY_DENIED, nothing runs)`, async () => {
    if (why === "runs after") {
      const raw = await makeTree();
      try {
        await plantLink(raw.jail, raw.outside);
        ok((await rawShell(raw.jail, line)).includes("TOP-SECRET-OUTSIDE"), `raw sh: ${line}`);
      } finally {
        await Deno.remove(raw.base, { recursive: true });
      }
    }
    await using fx = await layer1();
    await plantLink(fx.jail, fx.outside);
    const result = await assertRefused(fx, line, "POLICY_DENIED");
    match(result.policy_reason, new RegExp(`${why}.*"mv".*send them as separate calls`));
  });
}

Deno.test("the same steps as separate calls are each checked as the files are then: the mv runs, the read through the moved link is PATH_ESCAPE", async () => {
  await using fx = await layer1();
  await plantLink(fx.jail, fx.outside);
  const moved = await fx.run("mv d1 d2");
  equal(moved.code, "OK", moved.policy_reason);
  equal(moved.exit_code, 0, moved.stderr);
  await assertRefused(fx, "cat d2/r", "PATH_ESCAPE");
  const up = await fx.run("mv d2/up up");
  equal(up.exit_code, 0, up.stderr);
  await assertRefused(fx, "cat up", "PATH_ESCAPE");
});

Deno.test("plans whose steps make only regular files and folders, or whose last step is the mv, still run", async () => {
  await using fx = await layer1();
  for (
    const line of [
      "mkdir b && touch b/x && ls b",
      "echo hi > b.txt && cat b.txt | head -c 2",
      "cat notes.txt && mv notes.txt moved.txt",
    ]
  ) {
    const result = await fx.run(line);
    equal(result.code, "OK", `${line}: ${result.policy_reason}`);
    equal(result.exit_code, 0, `${line}: ${result.stderr}`);
  }
  ok(await Deno.stat(`${fx.jail}/moved.txt`).then(() => true));
});
