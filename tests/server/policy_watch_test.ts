/**
 * The policy watch on a real file and a real audit log: an edit made between
 * the server's load and the start of the watch is still reported (never
 * adopted as the baseline), each change once; stopping it stops the checks.
 */
import assert from "node:assert/strict";
import { loadPolicy } from "../../src/config/mod.ts";
import { AuditLog } from "../../src/audit/mod.ts";
import { policyHash } from "../../src/policy_tools/mod.ts";
import { watchPolicyFile } from "../../src/server/mod.ts";
import { policyToml } from "../_helpers/stdio_harness.ts";

async function settle(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("an edit between the load and the watch is reported once; a stopped watch reports nothing more", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-watch-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    const file = `${dir}/policy.toml`;
    const log = `${dir}/audit.jsonl`;
    await Deno.writeTextFile(file, policyToml(`${dir}/jail`, log, { allow: ["ls", "cat"] }));
    const env = { PATH: "/usr/bin:/bin" };
    const loaded = await loadPolicy({ policyFile: file, env });
    assert.ok(loaded.ok, loaded.ok ? "" : loaded.message);
    const running = await policyHash(loaded.policy);
    const opened = await AuditLog.open(log, "closed", { redact: (s) => s, policyHash: running });
    assert.ok(opened.ok);

    await Deno.writeTextFile(file, policyToml(`${dir}/jail`, log, { allow: ["ls"] }));
    const edited = await loadPolicy({ policyFile: file, env });
    assert.ok(edited.ok);
    const lines: string[] = [];
    const stop = watchPolicyFile(
      file,
      { policyHash: running, audit: opened.log },
      { env, overrides: {} },
      (line) => lines.push(line),
      50,
    );
    for (let i = 0; i < 100 && lines.length === 0; i++) await settle(50);
    await settle(300);
    await stop();
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, new RegExp(`changed \\(now ${await policyHash(edited.policy)}\\)`));

    // Stopped: a further edit is not looked at.
    await Deno.writeTextFile(file, policyToml(`${dir}/jail`, log, { allow: ["cat"] }));
    await settle(300);
    assert.equal(lines.length, 1);
    await opened.log.close();
    const events = (await Deno.readTextFile(log)).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => [e.event, e.old_policy_hash, e.policy_hash]), [
      ["policy_changed", running, running],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
