/**
 * The cost of one state operation on each backend, side by side: the local
 * state directory (files, fsync, flock) and PostgreSQL (a real server on
 * loopback, started for the run in a temp folder, fsync on: both sides
 * durable). Each figure is the
 * median and p95 of `n` sequential operations after a warm-up; "added" is
 * the PostgreSQL median minus the local one, the latency a fleet pays per
 * operation for sharing its state. Also the per-request revocation check a
 * replica makes (cached at most one second), which is what a tool call pays.
 *
 * @module
 */
import { LocalStateStore, migrate, openPool, PostgresStateStore } from "../src/state/mod.ts";
import type { StateStore } from "../src/state/mod.ts";
import { ClientRegistry } from "../src/auth/state/mod.ts";
import { startPostgres } from "../tests/_helpers/postgres.ts";

export interface StateOpRow {
  readonly op: string;
  readonly local: { readonly p50: number; readonly p95: number };
  readonly postgres: { readonly p50: number; readonly p95: number };
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

async function time(n: number, op: (i: number) => Promise<unknown>) {
  for (let i = 0; i < Math.min(20, n); i++) await op(-1 - i); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await op(i);
    samples.push(performance.now() - start);
  }
  return { p50: percentile(samples, 0.5), p95: percentile(samples, 0.95) };
}

const OPS: readonly [string, (store: StateStore, i: number) => Promise<unknown>][] = [
  ["read", (store) => store.read("bench", "r0")],
  ["write (replace)", (store, i) => store.write("bench", "r0", { i, pad: "x".repeat(200) })],
  ["get + compareAndSwap", async (store, i) => {
    const current = await store.get("bench", "r0");
    return await store.compareAndSwap("bench", "r0", current?.version ?? null, { i });
  }],
  [
    "update (read-decide-write)",
    (store, i) => store.update("bench", "r0", () => ({ next: { i }, result: i })),
  ],
  ["withLock + read + write", (store, i) =>
    store.withLock("bench", async () => {
      await store.read("bench", "r0");
      await store.write("bench", "r0", { i });
    })],
  ["list (50 records)", (store) => store.list("bench50")],
  ["readAll (50 records)", (store) => store.readAll("bench50")],
];

/**
 * Measures every operation on both backends.
 *
 * @returns The rows, or null (with the reason) when PostgreSQL is not installed.
 */
export async function measureStateOps(
  n: number,
): Promise<{ rows: StateOpRow[] } | { skipped: string }> {
  const server = await startPostgres({ durable: true });
  if ("skip" in server) return { skipped: server.skip };
  const dir = await Deno.makeTempDir({ prefix: "htmcp-state-bench-" });
  try {
    const url = await server.createDatabase("bench");
    const pool = async () => {
      const opened = await openPool(
        { backend: "postgres", urlFile: null, host: "127.0.0.1", port: server.port },
        { HTMCP_STATE_URL: url },
      );
      if (!opened.ok) throw new Error(opened.message);
      return opened.sql;
    };
    const admin = await pool();
    await migrate(admin);
    await admin.end();
    const stores = {
      local: new LocalStateStore(`${dir}/state`) as StateStore,
      postgres: new PostgresStateStore(await pool()) as StateStore,
    };
    for (const store of Object.values(stores)) {
      await store.write("bench", "r0", { i: 0 });
      for (let i = 0; i < 50; i++) await store.write("bench50", `r${i}`, { i });
    }
    const rows: StateOpRow[] = [];
    for (const [op, run] of OPS) {
      // Alternate the backends per operation so machine noise hits both alike.
      const local = await time(n, (i) => run(stores.local, i));
      const postgres = await time(n, (i) => run(stores.postgres, i));
      rows.push({ op, local, postgres });
    }
    // What a tool call pays: the bearer check's revocation lookup.
    const registries = {
      local: new ClientRegistry(`${dir}/oauth`),
      postgres: new ClientRegistry(stores.postgres),
    };
    rows.push({
      op: "revocation check per request",
      local: await time(n, () => registries.local.revocations()),
      postgres: await time(n, () => registries.postgres.revocations()),
    });
    for (const store of Object.values(stores)) await store.close();
    return { rows };
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Prints the section (also the body of `deno run -A bench/state_ops.ts [N]`). */
export async function printStateSection(n: number): Promise<void> {
  const result = await measureStateOps(n);
  if ("skipped" in result) {
    console.log(`   SKIPPED: ${result.skipped}`);
    return;
  }
  const f = (ms: number) => ms.toFixed(3).padStart(7);
  console.log(
    "   operation                       local p50/p95 ms      postgres p50/p95 ms   added p50",
  );
  for (const row of result.rows) {
    console.log(
      `   ${row.op.padEnd(31)} ${f(row.local.p50)} / ${f(row.local.p95)}   ${
        f(row.postgres.p50)
      } / ${f(row.postgres.p95)}   ${f(row.postgres.p50 - row.local.p50)} ms`,
    );
  }
}

if (import.meta.main) {
  const n = Number(Deno.args[0] ?? 300);
  console.log(`State store operations, n=${n} each, local vs PostgreSQL on loopback`);
  await printStateSection(n);
}
