/**
 * Fuzz test of the layer-1 path checker against a real tree with links:
 * random relative paths (`..`, `.`, `//`, deep folders, links inside and
 * out, dangling links, loops), while links are made and moved between
 * rounds. Every path the checker accepts is then resolved by GNU
 * `realpath -m` (symlinks followed at every depth, missing tails applied
 * lexically): none may land outside the jail. Seeded, so a failure repeats.
 */
import { ok } from "node:assert/strict";
import { planPathChecks } from "../../src/policy/mod.ts";
import { CheckBudget, confinePlan, isInside } from "../../src/jail/mod.ts";

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FOLDERS = ["d0", "d0/d1", "d0/d1/d2", "d0/d1/d2/d3", "e0", "e0/e1"];
const NAMES = [
  "d0",
  "d1",
  "d2",
  "d3",
  "e0",
  "e1",
  "f",
  "L0",
  "L1",
  "L2",
  "L3",
  "new",
  "..",
  ".",
  "",
];

async function realpathM(cwd: string, paths: readonly string[]): Promise<(string | null)[]> {
  const out = await new Deno.Command("realpath", {
    args: ["-m", "-z", "--", ...paths],
    cwd,
    stdout: "piped",
    stderr: "null",
  }).output();
  const lines = new TextDecoder().decode(out.stdout).split("\0").slice(0, -1);
  if (lines.length === paths.length) return lines;
  // Some path failed (a loop): resolve one by one so each keeps its answer.
  const each: (string | null)[] = [];
  for (const path of paths) each.push((await realpathM(cwd, [path]))[0] ?? null);
  return paths.length === 1 && lines.length === 0 ? [null] : each;
}

Deno.test("the path checker never accepts a path that realpath resolves outside the jail", async () => {
  const random = prng(0x5eed_2026);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-fuzz-" }));
  const jail = `${base}/jail`;
  try {
    for (const folder of FOLDERS) await Deno.mkdir(`${jail}/${folder}`, { recursive: true });
    await Deno.mkdir(`${base}/outside/d1`, { recursive: true });
    for (const folder of FOLDERS) await Deno.writeTextFile(`${jail}/${folder}/f`, "");
    let accepted = 0;
    let refused = 0;
    let links = 0;
    for (let round = 0; round < 40; round++) {
      // Make a link with a random relative (or absolute) text somewhere,
      // or move an existing one to another folder, as a model could.
      const where = `${jail}/${pick(FOLDERS)}`;
      const name = pick(["L0", "L1", "L2", "L3"]);
      const text = random() < 0.15
        ? pick([`${base}/outside`, `${jail}/d0`, "/etc"])
        : Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(NAMES)).join("/") ||
          "..";
      await Deno.remove(`${where}/${name}`).catch(() => {});
      await Deno.symlink(text, `${where}/${name}`).catch(() => {});
      links++;
      if (random() < 0.5) {
        const from = `${jail}/${pick(FOLDERS)}/${pick(["L0", "L1", "L2", "L3"])}`;
        const to = `${jail}/${pick(FOLDERS)}/${pick(["L0", "L1", "L2", "L3"])}`;
        await Deno.rename(from, to).catch(() => {});
      }
      const cwd = `${jail}/${pick(["", ...FOLDERS])}`.replace(/\/$/, "");
      const allowed: string[] = [];
      for (let sample = 0; sample < 40; sample++) {
        const length = 1 + Math.floor(random() * 9);
        const path = Array.from({ length }, () => pick(NAMES)).join(random() < 0.1 ? "//" : "/");
        if (path === "" || path.startsWith("/")) continue;
        const planned = planPathChecks(["cat", path], ["cat"], false);
        if (!planned.ok) continue;
        const verdict = await confinePlan(jail, cwd, planned.plan, new CheckBudget());
        if (verdict.ok) allowed.push(path);
        else refused++;
      }
      if (allowed.length === 0) continue;
      const resolved = await realpathM(cwd, allowed);
      allowed.forEach((path, index) => {
        const real = resolved[index];
        // realpath fails only on a loop, which the kernel refuses too.
        if (real === null || real === undefined) return;
        ok(
          isInside(jail, real),
          `accepted "${path}" from ${cwd} but realpath says ${real} (round ${round})`,
        );
      });
      accepted += allowed.length;
    }
    // The test means something only if both verdicts occur often.
    ok(accepted > 100, `only ${accepted} paths were accepted`);
    ok(refused > 40, `only ${refused} paths were refused`);
    ok(links === 40);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
