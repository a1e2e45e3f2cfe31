/**
 * The loader under a narrow Deno read grant, as the server runs under its
 * generated permission set: a PATH folder the server may not read counts as
 * "not here" (Deno answers `NotCapable`), so a confined server resolves every
 * name exactly as the generator did; and a state dir that does not exist yet
 * loads without read access to its parent folder.
 */
import assert from "node:assert/strict";
import { runHelper, type Scratch, withScratch } from "./_fixture.ts";

/** Runs the loader in a child Deno with only `permissions`, and parses its JSON. */
function loadConfined(
  s: Scratch,
  permissions: readonly string[],
  path: string,
): Promise<unknown> {
  return runHelper("_load_and_print", permissions, [`${s.dir}/policy.toml`, path], s.jail);
}

Deno.test("loadPolicy() treats a PATH folder outside the read grant as not holding the command", async () => {
  await withScratch(async (s) => {
    await s.write("hidden/tool", "#!/bin/sh\n", 0o755);
    await s.write("visible/tool", "#!/bin/sh\n", 0o755);
    await s.write(
      "policy.toml",
      'jail_root = "jail"\n[env]\npass = ["PATH"]\n[allowlist]\ncommands = ["tool"]\n',
    );
    const result = await loadConfined(s, [
      `--allow-read=${s.dir}`,
      // Deny beats the broader grant: `hidden` is off limits, as a folder
      // outside a generated read set would be.
      `--deny-read=${s.dir}/hidden`,
    ], `${s.dir}/hidden:${s.dir}/visible`);
    assert.deepEqual(result, {
      ok: true,
      allowlist: [{
        name: "tool",
        path: `${s.dir}/visible/tool`,
        realPath: `${s.dir}/visible/tool`,
      }],
      auditLog: `${s.dir}/htmcp-audit.jsonl`,
      stateDir: null,
    });
  });
});

Deno.test("loadPolicy() loads a not-yet-created state dir without read access to its parent", async () => {
  await withScratch(async (s) => {
    await Deno.mkdir(`${s.dir}/logs`);
    await Deno.mkdir(`${s.dir}/var`);
    await s.write(
      "policy.toml",
      'jail_root = "jail"\naudit_log = "logs/a.jsonl"\nstate_dir = "var/state"\n',
    );
    const grant = [`${s.dir}/policy.toml`, s.jail, `${s.dir}/logs`, `${s.dir}/var/state`];
    const result = await loadConfined(s, [`--allow-read=${grant.join(",")}`], "/nonexistent");
    assert.deepEqual(result, {
      ok: true,
      allowlist: [],
      auditLog: `${s.dir}/logs/a.jsonl`,
      stateDir: `${s.dir}/var/state`,
    });
  });
});
