/**
 * The engine's `prompt` verdict: only a command every refusing check allows
 * is held, and the verdict carries the rule and its justification (the
 * engine acts on nothing).
 */
import assert from "node:assert/strict";
import { evaluateArgv, evaluateCommand } from "../../src/policy/mod.ts";
import { assertLoaded, withScratch } from "../config/_fixture.ts";

const POLICY = 'jail_root = "jail"\nstate_dir = "state"\n[allowlist]\ncommands = ["git", "ls"]\n' +
  '[[rules]]\ncommand = "git"\ndeny_args = ["push --force"]\nreason = "no force pushes"\n' +
  '[[rules]]\ncommand = "git"\ndecision = "prompt"\nargs = ["push"]\njustification = "a push publishes commits"\n';

Deno.test("an allowed command matching a prompt rule is allowed with the rule and justification attached", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(POLICY));
    const decision = evaluateCommand("git push origin main", policy);
    assert.ok(decision.ok);
    assert.deepEqual(decision.prompt, {
      command: "git",
      entry: "push",
      justification: "a push publishes commits",
    });
    assert.match(
      decision.reason,
      /holds it until a human approves it \(a push publishes commits\)/,
    );
    const plain = evaluateArgv(["git", "status"], policy);
    assert.ok(plain.ok);
    assert.equal(plain.prompt, null);
  });
});

Deno.test("a command a deny rule or a guard refuses is refused, never offered for approval", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(POLICY));
    const forced = evaluateCommand("git push --force origin main", policy);
    assert.equal(forced.ok, false);
    assert.ok(!forced.ok && forced.code === "POLICY_DENIED");
    assert.match(!forced.ok ? forced.reason : "", /push --force/);
    // A guard (git -c core.sshCommand=...) refuses before any prompt rule is read.
    const guarded = evaluateArgv(["git", "-c", "core.sshCommand=sh", "push"], policy);
    assert.ok(!guarded.ok && guarded.code === "POLICY_DENIED");
  });
});
