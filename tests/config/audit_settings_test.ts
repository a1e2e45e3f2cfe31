/**
 * The `[audit]` keys for checkpoints and the model's own audit view: bad
 * values are startup errors naming the key, checkpoints are on by default
 * wherever a state dir can hold the key, and the checkpoint file gets a
 * write grant of its own (never its folder).
 */
import assert from "node:assert/strict";
import { buildPermissionSet } from "../../src/permissions/mod.ts";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

Deno.test("[audit] checkpoint_every, checkpoint_stderr and expose_to_model refuse bad values", async () => {
  await withScratch(async (s) => {
    const state = 'state_dir = "state"\n';
    assertRefused(
      await s.load(`${MINIMAL}${state}[audit]\ncheckpoint_every = -1\n`),
      'Policy key "audit.checkpoint_every" must be an integer from 0 to 1000000, got -1.',
    );
    assertRefused(
      await s.load(`${MINIMAL}${state}[audit]\ncheckpoint_every = 2.5\n`),
      'Policy key "audit.checkpoint_every" must be an integer from 0 to 1000000, got 2.5.',
    );
    assertRefused(
      await s.load(`${MINIMAL}${state}[audit]\ncheckpoint_stderr = "yes"\n`),
      'Policy key "audit.checkpoint_stderr" must be true or false, got "yes".',
    );
    assertRefused(
      await s.load(`${MINIMAL}${state}[audit]\nexpose_to_model = 1\n`),
      'Policy key "audit.expose_to_model" must be true or false, got 1.',
    );
    // Without a state dir there is no key to sign with: asking for checkpoints is an error.
    assertRefused(
      await s.load(`${MINIMAL}[audit]\ncheckpoint_every = 10\n`),
      'Policy key "audit.checkpoint_every" needs "state_dir", where the checkpoint signing key is kept.',
    );
    assertRefused(
      await s.load(`${MINIMAL}[audit]\ncheckpoint_stderr = true\n`),
      'Policy key "audit.checkpoint_stderr" needs "state_dir", where the checkpoint signing key is kept.',
    );
  });
});

Deno.test("checkpoints default to every 100 records with a state dir, off without one; the file is granted, not its folder", async () => {
  await withScratch(async (s) => {
    await s.write("logs/.keep", "");
    const log = 'audit_log = "logs/audit.jsonl"\n';
    const without = assertLoaded(await s.load(MINIMAL + log));
    assert.equal(without.auditCheckpoints, undefined);
    assert.equal(without.auditExposeToModel, undefined);
    const withState = assertLoaded(await s.load(`${MINIMAL}${log}state_dir = "state"\n`));
    assert.deepEqual(withState.auditCheckpoints, {
      every: 100,
      stderr: false,
      path: `${s.dir}/logs/audit.checkpoints.jsonl`,
    });
    const set = await buildPermissionSet(withState);
    if (!set.ok) throw new Error(set.reason);
    const writes = set.set.write.map((grant) => grant.value);
    assert.ok(writes.includes(`${s.dir}/logs/audit.checkpoints.jsonl`));
    assert.ok(!writes.includes(`${s.dir}/logs`), "the log's folder stays read-only");
    const exposed = assertLoaded(
      await s.load(`${MINIMAL}${log}[audit]\nexpose_to_model = true\n`),
    );
    assert.equal(exposed.auditExposeToModel, true);
  });
});
