/**
 * The jail root, audit log and state dir: relative resolution, environment
 * overrides, and the refusals that keep the model's own trail and the OAuth
 * secret out of its reach (real paths, so symlinks cannot hide an overlap).
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { loadPolicy } from "../../src/config/mod.ts";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

Deno.test("loadPolicy() refuses a policy without jail_root and without HTMCP_JAIL_ROOT", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load("[limits]\ntimeout_ms = 5\n"),
      'Policy key "jail_root" is not set; set it in the policy file or in the environment variable HTMCP_JAIL_ROOT.',
    );
  });
});

Deno.test("loadPolicy() refuses a jail root that does not exist", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load('jail_root = "missing"\n'),
      `Policy key "jail_root" names "${s.dir}/missing", which does not exist.`,
    );
  });
});

Deno.test("loadPolicy() refuses a jail root that is a file", async () => {
  await withScratch(async (s) => {
    await s.write("plain.txt", "x");
    assertRefused(
      await s.load('jail_root = "plain.txt"\n'),
      `Policy key "jail_root" names "${s.dir}/plain.txt", which is not a directory.`,
    );
  });
});

Deno.test("loadPolicy() refuses an HTMCP_JAIL_ROOT that does not exist and names the variable", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL, { HTMCP_JAIL_ROOT: `${s.dir}/gone` }),
      `Policy key "jail_root" (from HTMCP_JAIL_ROOT) names "${s.dir}/gone", which does not exist.`,
    );
  });
});

Deno.test("loadPolicy() refuses the filesystem root as the jail", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load('jail_root = "/"\n'),
      'Policy key "jail_root" resolves to "/", the whole filesystem; choose a dedicated folder.',
    );
  });
});

Deno.test("loadPolicy() refuses a path starting with ~ instead of expanding it", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load('jail_root = "~/work"\n'),
      'Policy key "jail_root" is "~/work", but "~" is not expanded; write an absolute path instead.',
    );
  });
});

Deno.test("loadPolicy() refuses a policy file that lives inside the jail", async () => {
  await withScratch(async (s) => {
    const policyFile = await s.write(
      "jail/policy.toml",
      'jail_root = "."\naudit_log = "../audit.jsonl"\n',
    );
    assertRefused(
      await loadPolicy({ policyFile, env: {} }),
      `Policy key "jail_root" is "${s.jail}", which contains the policy file itself, so the model could rewrite its own policy.`,
    );
  });
});

Deno.test("loadPolicy() resolves a jail reached through a symlink to its real path", async () => {
  await withScratch(async (s) => {
    await Deno.symlink(s.jail, `${s.dir}/jail-link`);
    const policy = assertLoaded(await s.load('jail_root = "jail-link"\n'));
    assert.equal(policy.jailRoot, s.jail);
  });
});

Deno.test("loadPolicy() resolves relative file keys against the policy file's folder, not the cwd", async () => {
  await withScratch(async (s) => {
    assert.notEqual(Deno.cwd(), s.dir);
    await Deno.mkdir(`${s.dir}/logs`);
    const policy = assertLoaded(
      await s.load('jail_root = "jail"\naudit_log = "logs/a.jsonl"\nstate_dir = "state"\n'),
    );
    assert.equal(policy.policyFile, `${s.dir}/policy.toml`);
    assert.equal(policy.jailRoot, s.jail);
    assert.equal(policy.auditLog, `${s.dir}/logs/a.jsonl`);
    assert.equal(policy.stateDir, `${s.dir}/state`);
  });
});

Deno.test("loadPolicy() puts the default audit log beside the policy file", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    assert.equal(policy.auditLog, `${s.dir}/htmcp-audit.jsonl`);
    assert.equal(policy.stateDir, null);
  });
});

Deno.test("loadPolicy() lets HTMCP_* variables override the file, resolving relative values against the cwd", async () => {
  await withScratch(async (s) => {
    await Deno.mkdir(`${s.dir}/other-jail`);
    const fromCwd = relative(Deno.cwd(), `${s.dir}/other-jail`);
    const policy = assertLoaded(
      await s.load(
        'jail_root = "jail"\naudit_log = "a.jsonl"\naudit_fail_mode = "closed"\nstate_dir = "st"\n',
        {
          HTMCP_JAIL_ROOT: fromCwd,
          HTMCP_AUDIT_LOG: `${s.dir}/env-audit.jsonl`,
          HTMCP_AUDIT_FAIL_MODE: "open",
          HTMCP_STATE_DIR: `${s.dir}/env-state`,
        },
      ),
    );
    assert.equal(policy.jailRoot, `${s.dir}/other-jail`);
    assert.equal(policy.auditLog, `${s.dir}/env-audit.jsonl`);
    assert.equal(policy.auditFailMode, "open");
    assert.equal(policy.stateDir, `${s.dir}/env-state`);
    assert.ok(policy.warnings.some((w) => w.startsWith('Policy key "audit_fail_mode" is "open"')));
  });
});

Deno.test("loadPolicy() treats an empty HTMCP_* variable as unset", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(MINIMAL, {
        HTMCP_JAIL_ROOT: "",
        HTMCP_AUDIT_FAIL_MODE: "",
        HTMCP_AUDIT_LOG: "",
      }),
    );
    assert.equal(policy.jailRoot, s.jail);
    assert.equal(policy.auditFailMode, "closed");
    assert.equal(policy.auditLog, `${s.dir}/htmcp-audit.jsonl`);
  });
});

Deno.test("loadPolicy() reads HTMCP_POLICY_FILE when no policy file is given", async () => {
  await withScratch(async (s) => {
    const policyFile = await s.write("from-env.toml", MINIMAL + "[limits]\ntimeout_ms = 1234\n");
    const policy = assertLoaded(
      await loadPolicy({ policyFile: null, env: { HTMCP_POLICY_FILE: policyFile } }),
    );
    assert.equal(policy.policyFile, policyFile);
    assert.equal(policy.limits.timeoutMs, 1234);
  });
});

Deno.test("loadPolicy() prefers the given policy file over HTMCP_POLICY_FILE", async () => {
  await withScratch(async (s) => {
    const chosen = await s.write("chosen.toml", MINIMAL + "[limits]\ntimeout_ms = 111\n");
    const policy = assertLoaded(
      await loadPolicy({ policyFile: chosen, env: { HTMCP_POLICY_FILE: `${s.dir}/missing.toml` } }),
    );
    assert.equal(policy.limits.timeoutMs, 111);
  });
});

Deno.test("loadPolicy() builds a policy from the environment alone, with nothing allowed", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await loadPolicy({
        policyFile: null,
        env: { HTMCP_JAIL_ROOT: s.jail, HTMCP_AUDIT_LOG: `${s.dir}/a.jsonl` },
      }),
    );
    assert.equal(policy.policyFile, null);
    assert.equal(policy.jailRoot, s.jail);
    assert.equal(policy.allowlist.size, 0);
    assert.ok(
      policy.warnings.includes("The allowlist is empty, so every command will be refused."),
    );
  });
});

Deno.test("loadPolicy() refuses an invalid HTMCP_AUDIT_FAIL_MODE", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL, { HTMCP_AUDIT_FAIL_MODE: "Closed" }),
      'Policy key "audit_fail_mode" (from HTMCP_AUDIT_FAIL_MODE) must be "closed" or "open", got "Closed".',
    );
  });
});

Deno.test("loadPolicy() refuses an audit log inside the jail", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + 'audit_log = "jail/sub/audit.jsonl"\n'),
      `Policy key "audit_log" names "${s.jail}/sub/audit.jsonl", which is inside the jail root "${s.jail}", where the model could rewrite it.`,
    );
  });
});

Deno.test("loadPolicy() refuses an audit log that is the jail root itself", async () => {
  await withScratch(async (s) => {
    const result = await s.load(MINIMAL + 'audit_log = "jail"\n');
    assert.ok(!result.ok);
    assert.match(
      result.message,
      /^Policy key "audit_log" names ".*\/jail", which is inside the jail root/,
    );
  });
});

Deno.test("loadPolicy() refuses an audit log whose folder is a symlink into the jail", async () => {
  await withScratch(async (s) => {
    await Deno.symlink(s.jail, `${s.dir}/logs`);
    assertRefused(
      await s.load(MINIMAL + 'audit_log = "logs/audit.jsonl"\n'),
      `Policy key "audit_log" names "${s.jail}/audit.jsonl", which is inside the jail root "${s.jail}", where the model could rewrite it.`,
    );
  });
});

Deno.test("loadPolicy() refuses an audit log that is a dangling symlink pointing into the jail", async () => {
  await withScratch(async (s) => {
    // Opening it with create: true would create jail/planted.jsonl.
    await Deno.symlink(`${s.jail}/planted.jsonl`, `${s.dir}/audit.jsonl`);
    assertRefused(
      await s.load(MINIMAL + 'audit_log = "audit.jsonl"\n'),
      `Policy key "audit_log" names "${s.jail}/planted.jsonl", which is inside the jail root "${s.jail}", where the model could rewrite it.`,
    );
  });
});

Deno.test("loadPolicy() refuses an HTMCP_AUDIT_LOG inside the jail and names the variable", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL, { HTMCP_AUDIT_LOG: `${s.jail}/a.jsonl` }),
      `Policy key "audit_log" (from HTMCP_AUDIT_LOG) names "${s.jail}/a.jsonl", which is inside the jail root "${s.jail}", where the model could rewrite it.`,
    );
  });
});

Deno.test("loadPolicy() does not mistake a sibling folder with a common prefix for the jail", async () => {
  await withScratch(async (s) => {
    await Deno.mkdir(`${s.dir}/jail-evil`);
    const policy = assertLoaded(await s.load(MINIMAL + 'audit_log = "jail-evil/a.jsonl"\n'));
    assert.equal(policy.auditLog, `${s.dir}/jail-evil/a.jsonl`);
  });
});

Deno.test("loadPolicy() refuses an audit log that is a directory", async () => {
  await withScratch(async (s) => {
    await Deno.mkdir(`${s.dir}/logs`);
    assertRefused(
      await s.load(MINIMAL + 'audit_log = "logs"\n'),
      `Policy key "audit_log" names "${s.dir}/logs", which is not a regular file.`,
    );
  });
});

Deno.test("loadPolicy() warns, without failing, when the audit log's folder does not exist", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL + 'audit_log = "nowhere/a.jsonl"\n'));
    assert.deepEqual(policy.warnings.filter((w) => w.includes("audit_log")), [
      `The folder of audit_log "${s.dir}/nowhere/a.jsonl" does not exist, so the server cannot open it and will not start (audit_fail_mode is "closed") until it is created.`,
    ]);
  });
});

Deno.test("loadPolicy() refuses a state dir inside the jail", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + 'state_dir = "jail/.state"\n'),
      `Policy key "state_dir" names "${s.jail}/.state", which is inside the jail root "${s.jail}", where the model could read the OAuth secret.`,
    );
  });
});

Deno.test("loadPolicy() refuses an HTMCP_STATE_DIR reaching the jail through a symlink", async () => {
  await withScratch(async (s) => {
    await Deno.symlink(s.jail, `${s.dir}/state-link`);
    assertRefused(
      await s.load(MINIMAL, { HTMCP_STATE_DIR: `${s.dir}/state-link/st` }),
      `Policy key "state_dir" (from HTMCP_STATE_DIR) names "${s.jail}/st", which is inside the jail root "${s.jail}", where the model could read the OAuth secret.`,
    );
  });
});

Deno.test("loadPolicy() refuses a state dir that is a file, and never creates it", async () => {
  await withScratch(async (s) => {
    await s.write("state", "x");
    assertRefused(
      await s.load(MINIMAL + 'state_dir = "state"\n'),
      `Policy key "state_dir" names "${s.dir}/state", which is not a directory.`,
    );
    assertLoaded(await s.load(MINIMAL + 'state_dir = "fresh-state"\n'));
    await assert.rejects(Deno.stat(`${s.dir}/fresh-state`), Deno.errors.NotFound);
  });
});
