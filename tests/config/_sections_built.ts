/**
 * Child-process helper for the schema sections test: loads `Deno.args[0]`
 * with the real loader in a fresh process and prints, as JSON, the
 * top-level tables whose schemas were built (a table's schema is built on
 * its first use; zod keeps what its lazy getter made in `_cachedInner`).
 */
import { loadPolicy } from "../../src/config/mod.ts";
import { PolicyFileSchema } from "../../src/config/schema.ts";

const loaded = await loadPolicy({ policyFile: Deno.args[0] ?? null, env: {} });
const built = Object.entries(PolicyFileSchema.shape).flatMap(([key, schema]) => {
  const inner = (schema._zod.def as { innerType?: { _zod: { def: { _cachedInner?: unknown } } } })
    .innerType;
  return inner?._zod.def._cachedInner === undefined ? [] : [key];
});
console.log(JSON.stringify({ ok: loaded.ok, built }));
