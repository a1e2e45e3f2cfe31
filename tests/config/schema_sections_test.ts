/**
 * The policy schema builds the schema of a top-level table only when the
 * file has that table: a start pays for the tables its policy uses, not for
 * all of them. Each case loads a real file through the real loader in a
 * fresh Deno process (a table built once stays built for the process).
 */
import assert from "node:assert/strict";
import { runHelper, withScratch } from "./_fixture.ts";

/** Loads `toml` in a fresh process; asserts whether it loaded and which tables' schemas were built. */
async function assertBuilt(toml: string, expected: { ok: boolean; built: string[] }) {
  await withScratch(async (s) => {
    const file = await s.write("policy.toml", toml);
    const found = await runHelper("_sections_built", ["--allow-read"], [file]);
    assert.deepEqual(found, expected);
  });
}

Deno.test("loading a policy builds the schemas of the tables it has and of no other", async () => {
  await assertBuilt(
    'jail_root = "jail"\n[allowlist]\ncommands = ["ls"]\n[limits]\ntimeout_ms = 5000\n',
    { ok: true, built: ["allowlist", "limits"] },
  );
});

Deno.test("a table left out is still refused when present and malformed (its schema is built then)", async () => {
  await assertBuilt(
    'jail_root = "jail"\n[allowlist]\ncommands = ["ls"]\n[audit]\nrotate_bytes = -1\n',
    { ok: false, built: ["audit", "allowlist"] },
  );
});
