/**
 * The executor runs exactly the policy's run specification: for git that
 * carries the safety options and environment, so a repository planted in
 * the jail with an fsmonitor program and hooks cannot make `git` run them,
 * and the executor adds nothing of its own.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { evaluateCommand } from "../../src/policy/mod.ts";
import { createRedactor } from "../../src/redact/mod.ts";
import { NO_REDACTION, setup } from "./_fixtures.ts";

Deno.test("git run through the executor ignores a planted fsmonitor and hooks (canary stays absent)", async () => {
  const s = await setup({ allow: ["git", "sh"] });
  try {
    const canary = join(s.jail, "canary");
    const evil = join(s.jail, "evil.sh");
    await Deno.writeTextFile(evil, `#!/bin/sh\ntouch ${canary}\n`);
    await Deno.chmod(evil, 0o755);
    const init = await s.run("git", ["init", "-q", "."]);
    assert.equal(init.exitCode, 0, init.stderr);
    await Deno.writeTextFile(
      join(s.jail, ".git/config"),
      `[core]\n\tfsmonitor = ${evil}\n\thooksPath = ${s.jail}/hooks\n`,
      { append: true },
    );
    await Deno.mkdir(join(s.jail, "hooks"));
    await Deno.copyFile(evil, join(s.jail, "hooks/post-checkout"));
    await Deno.chmod(join(s.jail, "hooks/post-checkout"), 0o755);
    const decision = evaluateCommand("git status", s.policy);
    assert.ok(decision.ok, JSON.stringify(decision));
    assert.ok(decision.run.args.includes("core.hooksPath=/dev/null"), "the spec carries -c");
    assert.equal(decision.run.env.GIT_CONFIG_GLOBAL, "/dev/null");
    const status = await s.executor.run({
      callId: "1",
      command: decision.command,
      args: decision.run.args,
      env: decision.run.env,
      cwd: s.jail,
      redactor: NO_REDACTION,
    });
    assert.equal(status.code, "OK");
    await assert.rejects(Deno.stat(canary), Deno.errors.NotFound);
    // The executor adds nothing itself: the bare argv runs the plant.
    await s.run("git", ["status"]);
    assert.ok((await Deno.stat(canary)).isFile, "the executor applied no hardening of its own");
    await Deno.remove(canary);
    // Control: the same planted config does run when git is started without hardening.
    const raw = await s.run("sh", ["-c", "git status >/dev/null 2>&1; true"]);
    assert.equal(raw.code, "OK");
    assert.ok((await Deno.stat(canary)).isFile, "control: the plant works without hardening");
  } finally {
    await s.close();
  }
});

Deno.test("run() with the server's redactor redacts a key straddling the output cap", async () => {
  const s = await setup({ limits: { maxOutputBytes: 30 } });
  try {
    const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
    const command = s.policy.allowlist.get("printf")!;
    const out = await s.executor.run({
      callId: "1",
      command,
      args: ["%s", "0123456789012345678901 AKIAIOSFODNN7EXAMPLE and more text"],
      cwd: s.jail,
      redactor,
    });
    assert.equal(out.code, "OUTPUT_TRUNCATED");
    assert.ok(!out.stdout.includes("AKIA") && !out.stdout.includes("EXAMPLE"), out.stdout);
    assert.match(out.stdout, /bytes dropped\]$/);
  } finally {
    await s.close();
  }
});
