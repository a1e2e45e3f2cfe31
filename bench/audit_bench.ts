/**
 * `deno run --allow-read --allow-write bench/audit_bench.ts [N] [DIR]`:
 * prints the audit append + fdatasync cost per record.
 */
import { measureAuditAppend } from "./audit_append.ts";

const n = Number(Deno.args[0] ?? 500);
const figures = await measureAuditAppend(n, Deno.args[1]);
const f = (ms: number) => ms.toFixed(3);
console.log(
  `audit append+fdatasync: ${f(figures.msPerRecord)} ms/record mean ` +
    `(p50 ${f(figures.p50Ms)}, p95 ${f(figures.p95Ms)}), ` +
    `${f(figures.msPerRecordConcurrent)} ms/record with 16 in flight (group commit), n=${n}`,
);
