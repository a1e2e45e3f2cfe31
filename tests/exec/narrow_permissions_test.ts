/**
 * The executor works under the narrow Deno permission set the server runs
 * with: run access to the launcher helper only, read access to the code and
 * the jail. No --allow-sys (the uid comes from the launcher), no read access
 * to /proc or the system folders (their layout falls back to binds).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/mod.ts";
import { makeJail } from "./_fixtures.ts";

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] the executor runs with --allow-run for the launcher helper alone`, async () => {
    const jail = await makeJail();
    try {
      const repo = fileURLToPath(new URL("../../", import.meta.url));
      const script = `
        import { createExecutor } from "${new URL("../../src/exec/mod.ts", import.meta.url)}";
        import { createRedactor } from "${new URL("../../src/redact/mod.ts", import.meta.url)}";
        import { makePolicy } from "${new URL("../_helpers/policy.ts", import.meta.url)}";
        const policy = makePolicy({ jailRoot: ${JSON.stringify(jail)}, allow: ["sh"],
          overrides: { sandbox: { mode: "${mode}", network: "none", networkAllow: [],
            acceptPathCheckOnly: ${mode === "none"}, user: null } } });
        const built = await createExecutor(policy);
        if (!built.ok) { console.log(JSON.stringify({ startup: built.message })); Deno.exit(0); }
        const out = await built.executor.run({ callId: "1", command: policy.allowlist.get("sh"),
          args: ["-c", "echo $$"], cwd: policy.jailRoot, redactor: createRedactor({ enabled: false, entropyFallback: false, extraPatterns: [] }) });
        console.log(JSON.stringify({ out, paths: built.executor.launcherPaths() }));
      `;
      const child = await new Deno.Command(Deno.execPath(), {
        args: [
          "eval",
          "--no-prompt",
          `--allow-read=${repo},${jail}`,
          `--allow-run=${DEFAULT_LAUNCHER_TOOLS.spawn}`,
          script,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(child.stdout).trim();
      const result = JSON.parse(text || "{}");
      assert.equal(result.out?.code, "OK", text + new TextDecoder().decode(child.stderr));
      assert.equal(result.out.stdout, "2\n");
      assert.deepEqual(result.paths, [DEFAULT_LAUNCHER_TOOLS.spawn]);
    } finally {
      await Deno.remove(jail, { recursive: true });
    }
  });
}
