/**
 * `git status` and `grep -R` through the real server over work trees of
 * growing size: before git runs, the repository check searches the whole
 * work tree for nested repositories (`src/policy/git_repository.ts`), and
 * before `grep -R` follows links the path checks search the tree for links
 * (`src/jail/tree_walk.ts`), each in one call of the helper (`htmcp-spawn
 * --walk-beneath`). Printed beside `ls` in the same folder, a call with no
 * such search.
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
const h = await startHarness({ allow: ["git", "ls", "grep"], sandbox: mode });
try {
  await assertSandboxMode(h, mode);
  console.log(`mode ${mode}, ${rounds} rounds, p50 ms`);
  console.log("folders   git status   grep -R   ls");
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
        if (result.code !== "OK" && result.exit_code !== 1) {
          throw new Error(`${command}: ${result.policy_reason}`);
        }
      }
      return percentiles(samples).p50;
    };
    const git = await time("git status --short");
    // grep finds nothing (exit 1): the time is the walk and the read.
    const grep = await time("grep -R -l no-such-text .");
    const ls = await time("ls");
    const cells = [git, grep, ls].map((ms, i) => ms.toFixed(1).padStart([10, 7, 6][i]!));
    console.log(`${String(folders).padStart(7)}   ${cells.join("   ")}`);
  }
} finally {
  await h.close();
}
