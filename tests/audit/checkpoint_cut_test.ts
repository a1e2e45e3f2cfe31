/**
 * A log cut while its writer keeps going: the writer's `segment` record
 * names the head it knew, and `verify --checkpoints` turns that and a
 * checkpoint beyond the cut into the exact records that are gone, where the
 * chain check alone only flags the boundary.
 */
import assert from "node:assert/strict";
import {
  AuditLog,
  loadOrCreateCheckpointKey,
  runAuditVerify,
  runCheckpointVerify,
} from "../../src/audit/mod.ts";
import { attemptFields, noRedaction, withTempDir } from "./_helpers.ts";

Deno.test("a log truncated under a running writer: verify --checkpoints names the records cut, exit 1", async () => {
  await withTempDir(async (dir) => {
    const key = await loadOrCreateCheckpointKey(`${dir}/state`);
    assert.ok(key.ok);
    const path = `${dir}/audit.jsonl`;
    const checkpoints = `${dir}/audit.checkpoints.jsonl`;
    const opened = await AuditLog.open(path, "open", {
      redact: noRedaction,
      warn: () => {},
      checkpoints: { path: checkpoints, every: 5, key: key.key, stderr: false },
    });
    assert.ok(opened.ok);
    for (let i = 0; i < 12; i++) await opened.log.writeAttempt(attemptFields());
    // Keep records 1 to 7 only, while the writer has the file open.
    const lines = (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "");
    await Deno.writeTextFile(path, lines.slice(0, 7).map((line) => `${line}\n`).join(""));
    const after = await opened.log.writeAttempt(attemptFields());
    assert.ok(after.ok);
    await opened.log.close();

    const chainLines: string[] = [];
    assert.equal(await runAuditVerify([path], (line) => chainLines.push(line)), 3);
    assert.match(chainLines.join("\n"), /found the log replaced or truncated/);

    const publicKey = `${dir}/key.json`;
    await Deno.writeTextFile(publicKey, JSON.stringify(key.key.publicJwk));
    const printed: string[] = [];
    const code = await runCheckpointVerify(
      { logs: [path], checkpoints, key: publicKey },
      (line) => printed.push(line),
    );
    assert.equal(code, 1, printed.join("\n"));
    assert.match(printed.join("\n"), /MISSING 5 record\(s\): seq 8 to 12 of the chain as it was/);
  });
});
