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

Deno.test('an allowlist entry with decision = "prompt" holds every run, with or without arguments, after every refusing check', async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        'jail_root = "jail"\nstate_dir = "state"\n[allowlist]\ncommands = ["ls", ' +
          '{ name = "git", decision = "prompt", justification = "git is visible to everyone." }]\n' +
          '[[rules]]\ncommand = "git"\ndeny_args = ["push --force"]\nreason = "no force pushes"\n',
      ),
    );
    for (const argv of [["git"], ["git", "status"], ["git", "push", "origin"]]) {
      const decision = evaluateArgv(argv, policy);
      assert.ok(decision.ok, argv.join(" "));
      assert.deepEqual(decision.prompt, {
        command: "git",
        entry: "(every run)",
        justification: "git is visible to everyone.",
      });
      assert.match(decision.reason, /its allowlist entry holds every run until a human approves/);
    }
    const forced = evaluateCommand("git push --force origin", policy);
    assert.ok(!forced.ok && forced.code === "POLICY_DENIED", "a refusal stays a refusal");
    const ls = evaluateArgv(["ls"], policy);
    assert.ok(ls.ok);
    assert.equal(ls.prompt, null, "other entries are not held");
  });
});

Deno.test("a deny rule marked everyRun matches nothing: only a prompt may cover every run", async () => {
  await withScratch(async (s) => {
    const loaded = assertLoaded(await s.load(POLICY));
    const policy = {
      ...loaded,
      rules: [{
        command: "ls",
        denyArgs: [],
        reason: "would refuse every ls",
        enforce: "deny" as const,
        everyRun: true as const,
      }],
    };
    const decision = evaluateArgv(["ls"], policy);
    assert.ok(decision.ok);
    assert.equal(decision.prompt, null);
  });
});
