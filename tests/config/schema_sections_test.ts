/**
 * The policy schema builds the schema of a top-level table only when the
 * file has that table: a start pays for the tables its policy uses, not for
 * all of them. Each case loads a real file through the real loader in a
 * fresh Deno process (a table built once stays built for the process).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { withScratch } from "./_fixture.ts";

const HELPER = fileURLToPath(new URL("./_sections_built.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

async function sectionsBuilt(policyFile: string): Promise<{ ok: boolean; built: string[] }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--config=${CONFIG}`,
      "--allow-read",
      HELPER,
      policyFile,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
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
