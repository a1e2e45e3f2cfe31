/**
 * `deno bench --allow-read --allow-write bench/path_check_bench.ts`: the
 * layer-1 path checks on hostile and ordinary arguments, against a real temp
 * jail. The target: a 16 KB word of any shape is judged in milliseconds
 * (the check is linear in the argument size and bounded).
 *
 * @module
 */
import { planPathChecks } from "../src/policy/mod.ts";
import { CheckBudget, confinePlan } from "../src/jail/mod.ts";

const jail = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-bench-paths-" }));
await Deno.mkdir(`${jail}/x/deep/a/b/c`, { recursive: true });
for (let file = 0; file < 500; file++) await Deno.writeTextFile(`${jail}/x/deep/f${file}`, "");

async function judge(argv: readonly string[]): Promise<void> {
  const planned = planPathChecks(argv, [argv[0] as string], false);
  if (!planned.ok) return;
  await confinePlan(jail, jail, planned.plan, new CheckBudget());
}

const equalsWord = "x/..=".repeat(3_200);
const dotsWord = "x/../".repeat(3_200) + "x";
const clusterWord = `-${"a".repeat(16_000)}/x`;

Deno.bench("16 KB x/..= word (refused over the candidate budget)", async () => {
  await judge(["cat", equalsWord]);
});
Deno.bench("16 KB x/../ word, 6,400 segments, x exists", async () => {
  await judge(["cat", dotsWord]);
});
Deno.bench("16 KB single-dash cluster with a slash", async () => {
  await judge(["cat", clusterWord]);
});
Deno.bench("grep -R walk of a 500-file tree", async () => {
  await judge(["grep", "-R", "pattern", "x"]);
});
Deno.bench("ordinary: cp --parents a/b dir", { baseline: true }, async () => {
  await judge(["cp", "--parents", "x/deep/f1", "x/deep/a"]);
});

globalThis.addEventListener("unload", () => {
  Deno.removeSync(jail, { recursive: true });
});
