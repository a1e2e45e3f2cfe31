/**
 * `htmcp audit verify FILE...` and `htmcp audit head FILE` as a user runs
 * them: through the launcher's plan (read on those files only), in a real
 * child process.
 */
import assert from "node:assert/strict";
import { AuditLog, verifyAuditChain } from "../../src/audit/mod.ts";
import { planLaunch } from "../../scripts/launch.ts";
import { REPO } from "../_helpers/stdio_harness.ts";
import { attemptFields, noRedaction, withTempDir } from "./_helpers.ts";

async function htmcp(args: string[]) {
  const plan = await planLaunch(args, REPO);
  if (!plan.ok) throw new Error(plan.message);
  const output = await new Deno.Command(Deno.execPath(), {
    args: [...plan.argv],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return {
    plan: plan.argv,
    code: output.code,
    stdout: decode(output.stdout),
    stderr: decode(output.stderr),
  };
}

Deno.test("audit head prints the chain head that verify reports, reading only that file", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.ok(opened.ok);
    for (let i = 0; i < 3; i++) await opened.log.writeAttempt(attemptFields());
    await opened.log.close();
    const report = verifyAuditChain(await Deno.readFile(path));
    assert.ok(report.ok);
    const ran = await htmcp(["audit", "head", path]);
    assert.ok(ran.plan.includes(`--allow-read=${path}`));
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, `seq=3 sha256=${report.head}\n`);
    const usage = await htmcp(["audit", "head"]);
    assert.equal(usage.code, 2);
    assert.match(
      usage.stderr,
      /Usage: htmcp audit verify \[--checkpoints FILE --key KEYFILE\] FILE\.\.\./,
    );
  });
});

Deno.test("audit verify takes a rotated series and may read exactly those files", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/audit.jsonl`;
    const opened = await AuditLog.open(path, "closed", { redact: noRedaction });
    assert.ok(opened.ok);
    await opened.log.writeAttempt(attemptFields());
    await Deno.rename(path, `${path}.1`);
    await opened.log.writeAttempt(attemptFields());
    await opened.log.close();
    const ran = await htmcp(["audit", "verify", `${path}.1`, path]);
    assert.ok(ran.plan.includes(`--allow-read=${path}.1,${path}`));
    assert.equal(ran.code, 0, ran.stdout + ran.stderr);
    assert.match(ran.stdout, /series of 2 files is linked end to end/);
    // Out of order, the series does not link.
    const reversed = await htmcp(["audit", "verify", path, `${path}.1`]);
    assert.equal(reversed.code, 1);
  });
});
