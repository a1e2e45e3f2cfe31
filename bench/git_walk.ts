/**
 * `git status` through the real server over work trees of growing size:
 * before git runs, the repository check searches the whole work tree for
 * nested repositories (`src/policy/git_repository.ts`), in one call of the
 * helper (`htmcp-spawn --walk-beneath`). Printed beside `ls` in the same
 * folder, the call with no such search.
 *
 * Run: deno run -A bench/git_walk.ts [none|bwrap] [rounds]
 *
 * @module
 */
import { startHarness } from "../tests/_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree } from "../tests/_helpers/jail.ts";
import { percentiles } from "./stdio_roundtrip.ts";

const mode = (Deno.args[0] ?? "none") as "none" | "bwrap";
const rounds = Number(Deno.args[1] ?? 5);
const h = await startHarness({ allow: ["git", "ls"], sandbox: mode });
try {
  await assertSandboxMode(h, mode);
  console.log(`mode ${mode}, ${rounds} rounds, p50 ms`);
  console.log("folders   git status   ls");
  for (const folders of [100, 1_000, 5_000]) {
    const top = `${h.jail}/r${folders}`;
    for (let i = 0; i < folders; i++) {
      await Deno.mkdir(`${top}/d${Math.floor(i / 50)}/e${i}`, { recursive: true });
    }
    await new Deno.Command("git", { args: ["init", "-q", "."], cwd: top }).output();
    await chownTree(top);
    const time = async (command: string) => {
      const samples: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const started = performance.now();
        const result = await h.call("run_command", { command, cwd: `r${folders}` });
        samples.push(performance.now() - started);
        if (result.code !== "OK") throw new Error(`${command}: ${result.policy_reason}`);
      }
      return percentiles(samples).p50;
    };
    const git = await time("git status --short");
    const ls = await time("ls");
    console.log(
      `${String(folders).padStart(7)}   ${git.toFixed(1).padStart(10)}   ${
        ls.toFixed(1).padStart(6)
      }`,
    );
  }
} finally {
  await h.close();
}
