/**
 * Command resolution under a narrow Deno read grant: a PATH folder the server
 * may not read counts as "not here" (Deno answers `NotCapable`), so a server
 * confined to its generated read set resolves every name exactly as the
 * generator did and never fails because of a folder outside its grant.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { withScratch } from "./_fixture.ts";

const HELPER = fileURLToPath(new URL("./_load_and_print.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

Deno.test("loadPolicy() treats a PATH folder outside the read grant as not holding the command", async () => {
  await withScratch(async (s) => {
    await s.write("hidden/tool", "#!/bin/sh\n", 0o755);
    await s.write("visible/tool", "#!/bin/sh\n", 0o755);
    const policyFile = await s.write(
      "policy.toml",
      'jail_root = "jail"\n[env]\npass = ["PATH"]\n[allowlist]\ncommands = ["tool"]\n',
    );
    const grant = [`${s.dir}/policy.toml`, s.jail, `${s.dir}/visible`, s.dir].join(",");
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        `--config=${CONFIG}`,
        `--allow-read=${grant}`,
        // Deny beats the broader grant on the scratch folder: `hidden` is off limits.
        `--deny-read=${s.dir}/hidden`,
        HELPER,
        policyFile,
        `${s.dir}/hidden:${s.dir}/visible`,
      ],
      cwd: s.dir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    const result = JSON.parse(new TextDecoder().decode(output.stdout));
    assert.deepEqual(result, {
      ok: true,
      allowlist: [{
        name: "tool",
        path: `${s.dir}/visible/tool`,
        realPath: `${s.dir}/visible/tool`,
      }],
    });
  });
});
