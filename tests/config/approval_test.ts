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

const RULE_TOML = `[[always]]
id = "3f0c"
owner = "local"
digest = "${"a".repeat(64)}"
rule = "git push"
argv = ["git", "push"]
cwd = "."
added_by = "cli:root"
added_ms = 1
`;

Deno.test("[approval] always_allow_file loads its rules; an absent file is no rules", async () => {
  await withScratch(async (s) => {
    const absent = assertLoaded(
      await s.load(`${BASE}${PROMPT_RULE}[approval]\nalways_allow_file = "ops/always.toml"\n`),
    );
    assert.equal(absent.approval?.alwaysAllowFile, `${s.dir}/ops/always.toml`);
    assert.deepEqual(absent.approval?.alwaysAllow, []);
    assert.equal(absent.approval?.alwaysAllowSha256, null);
    await s.write("ops/always.toml", RULE_TOML, 0o600);
    const present = assertLoaded(
      await s.load(`${BASE}${PROMPT_RULE}[approval]\nalways_allow_file = "ops/always.toml"\n`),
    );
    assert.equal(present.approval?.alwaysAllow?.length, 1);
    assert.equal(present.approval?.alwaysAllow?.[0]?.rule, "git push");
    assert.match(present.approval?.alwaysAllowSha256 ?? "", /^[0-9a-f]{64}$/);
  });
});

Deno.test("[approval] always_allow_file refuses to start on a file others could write, a symlink, a place the model reaches, or a malformed rule", async () => {
  await withScratch(async (s) => {
    const policy = (file: string) =>
      `${BASE}${PROMPT_RULE}[approval]\nalways_allow_file = ${JSON.stringify(file)}\n`;
    await s.write("ops/shared.toml", RULE_TOML, 0o620);
    const shared = await s.load(policy("ops/shared.toml"));
    assert.ok(!shared.ok);
    assert.match(shared.message, /writable by users other than its owner; run chmod 600/);

    await s.write("ops/real.toml", RULE_TOML, 0o600);
    await Deno.symlink(`${s.dir}/ops/real.toml`, `${s.dir}/ops/link.toml`);
    const link = await s.load(policy("ops/link.toml"));
    assert.ok(!link.ok);
    assert.match(link.message, /is a symlink/);

    const jail = await s.load(policy("jail/always.toml"));
    assert.ok(!jail.ok);
    assert.match(jail.message, /inside ".*jail", which the model's commands/);
    await Deno.mkdir(`${s.dir}/state`, { recursive: true, mode: 0o700 });
    const state = await s.load(policy("state/always.toml"));
    assert.ok(!state.ok);
    assert.match(state.message, /inside ".*state", which the model's commands/);

    // A folder on the way that leads into the jail is judged where it leads.
    await Deno.symlink(s.jail, `${s.dir}/into-jail`);
    await Deno.writeTextFile(`${s.jail}/always.toml`, RULE_TOML, { mode: 0o600 });
    await Deno.chmod(`${s.jail}/always.toml`, 0o600);
    const via = await s.load(policy("into-jail/always.toml"));
    assert.ok(!via.ok);
    assert.match(via.message, /inside ".*jail"/);

    await s.write("ops/bad.toml", RULE_TOML.replace('rule = "git push"\n', ""), 0o600);
    const bad = await s.load(policy("ops/bad.toml"));
    assert.ok(!bad.ok);
    assert.match(bad.message, /malformed \[\[always\]\] entry \(number 1\)/);
    await s.write("ops/extra.toml", `allow_everything = true\n${RULE_TOML}`, 0o600);
    const extra = await s.load(policy("ops/extra.toml"));
    assert.ok(!extra.ok);
    assert.match(extra.message, /unknown key "allow_everything"/);
  });
});
