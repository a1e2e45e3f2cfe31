/**
 * `deno run -A bench/sandbox_bench.ts [N]`: prints the per-call cost of a
 * bare spawn, of process-tree containment, and of the bubblewrap sandbox,
 * side by side (p50/p95, extra over bare spawn), plus startup probe time.
 */
import { measureSpawnCosts } from "./spawn_cost.ts";

const n = Number(Deno.args[0] ?? 100);
const f = await measureSpawnCosts(n);
const ms = (x: number) => `${x.toFixed(2)} ms`;
const row = (name: string, p50: number, p95: number, extra: number | null) =>
  `${name.padEnd(34)} p50 ${ms(p50).padStart(9)}  p95 ${ms(p95).padStart(9)}` +
  (extra === null ? "" : `  (+${ms(extra)} at p50)`);
console.log(`Per-call cost of /usr/bin/true, spawn to reap, n=${f.n} (interleaved):`);
console.log(row("bare Deno.Command (floor)", f.directP50Ms, f.directP95Ms, null));
console.log(
  row('containment only (mode "none")', f.containedP50Ms, f.containedP95Ms, f.containedExtraP50Ms),
);
console.log(
  row('bwrap sandbox (mode "bwrap")', f.sandboxP50Ms, f.sandboxP95Ms, f.sandboxExtraP50Ms),
);
console.log(
  `startup probes: ${ms(f.containedStartupMs)} (none), ${ms(f.sandboxStartupMs)} (bwrap); ` +
    `target: sandbox at most +10 ms at p50 -> ${f.sandboxExtraP50Ms <= 10 ? "met" : "NOT met"}`,
);
