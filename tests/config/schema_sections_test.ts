/**
 * The policy schema builds the schema of a top-level table only when the
 * file has that table: a start pays for the tables its policy uses, not for
 * all of them. Each case loads a real file through the real loader in a
 * fresh Deno process (a table built once stays built for the process).
 */
import assert from "node:assert/strict";
import { runHelper, withScratch } from "./_fixture.ts";

function sectionsBuilt(policyFile: string): Promise<unknown> {
  return runHelper("_sections_built", ["--allow-read"], [policyFile]);
}

Deno.test("loading a policy builds the schemas of the tables it has and of no other", async () => {
  await withScratch(async (s) => {
    const file = await s.write(
      "policy.toml",
      'jail_root = "jail"\n[allowlist]\ncommands = ["ls"]\n[limits]\ntimeout_ms = 5000\n',
    );
    assert.deepEqual(await sectionsBuilt(file), { ok: true, built: ["allowlist", "limits"] });
  });
});

Deno.test("a table left out is still refused when present and malformed (its schema is built then)", async () => {
  await withScratch(async (s) => {
    const file = await s.write(
      "policy.toml",
      'jail_root = "jail"\n[allowlist]\ncommands = ["ls"]\n[audit]\nrotate_bytes = -1\n',
    );
    assert.deepEqual(await sectionsBuilt(file), { ok: false, built: ["audit", "allowlist"] });
  });
});
