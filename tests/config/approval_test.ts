/**
 * `decision = "prompt"` rules and `[approval]` through the real loader:
 * defaults, a valid table, and every bad value refused at startup with one
 * sentence naming the key.
 */
import assert from "node:assert/strict";
import { assertLoaded, withScratch } from "./_fixture.ts";

const BASE = 'jail_root = "jail"\nstate_dir = "state"\n[allowlist]\ncommands = ["git", "ls"]\n';
const PROMPT_RULE =
  '[[rules]]\ncommand = "git"\ndecision = "prompt"\nargs = ["push"]\njustification = "a push publishes commits"\n';

Deno.test("a prompt rule loads with its args and justification, and [approval] defaults apply", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(`${BASE}${PROMPT_RULE}`));
    assert.deepEqual(policy.rules, [{
      command: "git",
      denyArgs: ["push"],
      reason: "a push publishes commits",
      enforce: "deny",
      decision: "prompt",
      justification: "a push publishes commits",
    }]);
    assert.deepEqual(policy.approval, { ttlMs: 300_000, waitMs: 30_000, require: "any" });
  });
});

Deno.test("[approval] takes ttl_s, wait_ms and require", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        `${BASE}${PROMPT_RULE}[approval]\nttl_s = 60\nwait_ms = 0\nrequire = "operator"\n`,
      ),
    );
    assert.deepEqual(policy.approval, { ttlMs: 60_000, waitMs: 0, require: "operator" });
  });
});

Deno.test("prompt rules and [approval] refuse bad values with a sentence naming the key", async () => {
  const cases: [string, RegExp][] = [
    [
      '[[rules]]\ncommand = "git"\ndecision = "prompt"\nargs = ["push"]\n',
      /"rules\[1\]\.justification" is required for decision = "prompt"/,
    ],
    [
      '[[rules]]\ncommand = "git"\ndecision = "prompt"\njustification = "x"\n',
      /"rules\[1\]\.args" is required/,
    ],
    [
      '[[rules]]\ncommand = "git"\ndecision = "prompt"\nargs = ["push"]\ndeny_args = ["push"]\njustification = "x"\n',
      /decision = "prompt", which takes args and justification, not deny_args or enforce/,
    ],
    [
      '[[rules]]\ncommand = "git"\ndecision = "prompt"\nargs = ["push"]\nenforce = "warn"\njustification = "x"\n',
      /not deny_args or enforce/,
    ],
    [
      '[[rules]]\ncommand = "git"\ndeny_args = ["push"]\nreason = "r"\njustification = "x"\n',
      /takes args and justification only with decision = "prompt"/,
    ],
    [
      '[[rules]]\ncommand = "git"\ndecision = "ask"\nargs = ["push"]\njustification = "x"\n',
      /rules.*decision.*"deny" or "prompt"/,
    ],
    [
      '[[rules]]\ncommand = "git"\ndecision = "prompt"\nargs = ["  "]\njustification = "x"\n',
      /"rules\[1\]\.args\[1\]" holds only whitespace/,
    ],
    [`${PROMPT_RULE}[approval]\nttl_s = 0\n`, /approval\.ttl_s.*integer from 1 to 86400/],
    [`${PROMPT_RULE}[approval]\nwait_ms = 600001\n`, /approval\.wait_ms.*to 600000/],
    [`${PROMPT_RULE}[approval]\nrequire = "nobody"\n`, /approval\.require.*"any" or "operator"/],
    [`${PROMPT_RULE}[approval]\nauto_allow = true\n`, /"approval\.auto_allow" is not recognised/],
  ];
  await withScratch(async (s) => {
    for (const [body, pattern] of cases) {
      const result = await s.load(`${BASE}${body}`);
      assert.ok(!result.ok, `${body} should be refused`);
      assert.match(result.message, pattern, body);
    }
  });
});

Deno.test("a prompt rule without a state store is refused: nobody could answer it out of band", async () => {
  await withScratch(async (s) => {
    const result = await s.load(
      `jail_root = "jail"\n[allowlist]\ncommands = ["git"]\n${PROMPT_RULE}`,
    );
    assert.ok(!result.ok);
    assert.match(result.message, /decision = "prompt".*need a state_dir/);
  });
});

Deno.test('an allowlist entry may say decision = "prompt": every run of it is held, judged like a prompt rule', async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        'jail_root = "jail"\nstate_dir = "state"\n[allowlist]\ncommands = ["ls", ' +
          '{ name = "git", decision = "prompt", justification = "git is visible to everyone." }, ' +
          '{ name = "cat", decision = "allow" }]\n',
      ),
    );
    assert.deepEqual([...policy.allowlist.keys()], ["ls", "git", "cat"]);
    assert.deepEqual(policy.rules, [{
      command: "git",
      denyArgs: [],
      reason: "git is visible to everyone.",
      enforce: "deny",
      decision: "prompt",
      justification: "git is visible to everyone.",
      everyRun: true,
    }]);
  });
});

Deno.test("allowlist entries refuse bad values with a sentence naming the entry", async () => {
  const cases: [string, RegExp][] = [
    [
      '{ name = "git", decision = "prompt" }',
      /"allowlist\.commands\[2\]\.justification" is required for decision = "prompt"/,
    ],
    [
      '{ name = "git", decision = "prompt", justification = "  " }',
      /"allowlist\.commands\[2\]\.justification" is required/,
    ],
    [
      '{ name = "git", decision = "prompt", justification = "x", args = ["push"] }',
      /"allowlist\.commands\[2\]\.args" is not recognised; the keys allowed in an allowlist entry are: name, decision, justification/,
    ],
    [
      '{ name = "git", decision = "deny" }',
      /"allowlist\.commands\[2\]\.decision" must be "allow" or "prompt"/,
    ],
    [
      '{ name = "git", decision = 1 }',
      /"allowlist\.commands\[2\]\.decision" must be "allow" or "prompt"/,
    ],
    ['{ decision = "prompt", justification = "x" }', /"allowlist\.commands\[2\]\.name" is missing/],
    [
      '{ name = "git", justification = "x" }',
      /takes a justification only with decision = "prompt"/,
    ],
    ['{ name = "/usr/bin/git", decision = "prompt", justification = "x" }', /never by path/],
    ["7", /"allowlist\.commands\[2\]" must be a non-empty string, got 7/],
  ];
  await withScratch(async (s) => {
    for (const [entry, pattern] of cases) {
      const result = await s.load(
        `jail_root = "jail"\nstate_dir = "state"\n[allowlist]\ncommands = ["ls", ${entry}]\n`,
      );
      assert.ok(!result.ok, `${entry} should be refused`);
      assert.match(result.message, pattern, entry);
    }
    // Held for a human needs somewhere to hold the approval.
    const stateless = await s.load(
      'jail_root = "jail"\n[allowlist]\ncommands = [{ name = "git", decision = "prompt", justification = "x" }]\n',
    );
    assert.ok(!stateless.ok);
    assert.match(stateless.message, /allowlist entries with decision = "prompt".*need a state_dir/);
  });
});
