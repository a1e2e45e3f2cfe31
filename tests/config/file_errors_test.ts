/**
 * Startup validation of the file itself: each loud failure is one sentence
 * naming the key (or the file), returned as a value, never thrown.
 */
import assert from "node:assert/strict";
import { loadPolicy } from "../../src/config/mod.ts";
import { assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

Deno.test("loadPolicy() refuses a --policy file that does not exist", async () => {
  await withScratch(async ({ dir }) => {
    const result = await loadPolicy({ policyFile: `${dir}/nope.toml`, env: {} });
    assertRefused(result, `Policy file "${dir}/nope.toml" (--policy) does not exist.`);
  });
});

Deno.test("loadPolicy() refuses an HTMCP_POLICY_FILE that does not exist", async () => {
  await withScratch(async ({ dir }) => {
    const result = await loadPolicy({
      policyFile: null,
      env: { HTMCP_POLICY_FILE: `${dir}/nope.toml` },
    });
    assertRefused(result, `Policy file "${dir}/nope.toml" (HTMCP_POLICY_FILE) does not exist.`);
  });
});

Deno.test("loadPolicy() refuses a policy path that is a directory", async () => {
  await withScratch(async ({ dir, jail }) => {
    const result = await loadPolicy({ policyFile: jail, env: {} });
    assertRefused(result, `Policy file "${jail}" (--policy) is a directory.`);
    assert.ok(dir.length > 0);
  });
});

Deno.test("loadPolicy() refuses invalid TOML and names the line and column", async () => {
  await withScratch(async (s) => {
    const result = await s.load('jail_root = "jail"\n\n[limits\ntimeout_ms = 5\n');
    assertRefused(
      result,
      `Policy file "${s.dir}/policy.toml" is not valid TOML at line 3, column 8: illegal character in key.`,
    );
  });
});

Deno.test("loadPolicy() refuses a TOML key defined twice", async () => {
  await withScratch(async (s) => {
    const result = await s.load('jail_root = "jail"\njail_root = "jail"\n');
    assert.ok(!result.ok);
    assert.match(
      result.message,
      /^Policy file ".*policy\.toml" is not valid TOML at line 2, column \d+: .*redefine.*\.$/,
    );
  });
});

Deno.test("loadPolicy() refuses a policy file that is not UTF-8", async () => {
  await withScratch(async (s) => {
    const path = `${s.dir}/latin1.toml`;
    await Deno.writeFile(path, new Uint8Array([0x6a, 0x3d, 0x22, 0xe9, 0x22, 0x0a]));
    const result = await loadPolicy({ policyFile: path, env: {} });
    assertRefused(result, `Policy file "${path}" (--policy) is not valid UTF-8.`);
  });
});

Deno.test("loadPolicy() refuses an unknown top-level key and lists the allowed ones", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + 'jailroot = "x"\n'),
      'Policy key "jailroot" is not recognised; the keys allowed at the top level are: jail_root, audit_log, audit_fail_mode, state_dir, audit, allowlist, denylist, rules, tests, commands, limits, redaction, env, paths, guards, describe, mode, sessions, approval, links, log, telemetry, sandbox, http, auth, state.',
    );
  });
});

Deno.test("loadPolicy() refuses a misspelt table name", async () => {
  await withScratch(async (s) => {
    const result = await s.load(MINIMAL + "[limit]\ntimeout_ms = 5\n");
    assert.ok(!result.ok);
    assert.match(result.message, /^Policy key "limit" is not recognised; /);
  });
});

Deno.test("loadPolicy() refuses an unknown key inside [limits]", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + "[limits]\ntimeout = 5\n"),
      'Policy key "limits.timeout" is not recognised; the keys allowed in [limits] are: timeout_ms, max_output_bytes, max_concurrent, queue_max, queue_wait_ms, cpu_seconds, address_space_bytes, max_processes, file_size_bytes, open_files, progress_interval_ms, foreground_ms, max_timeout_ms, job_output_bytes, job_retention_s, inline_output_bytes.',
    );
  });
});

Deno.test("loadPolicy() refuses an unknown key inside a [[rules]] entry", async () => {
  await withScratch(async (s) => {
    const toml = MINIMAL + '[allowlist]\ncommands = ["ls"]\n' +
      '[[rules]]\ncommand = "ls"\ndeny_args = ["-R"]\nreason = "r"\n' +
      '[[rules]]\ncommand = "ls"\ndeny_args = ["-a"]\nreason = "r"\ndeny_arg = ["x"]\n';
    assertRefused(
      await s.load(toml),
      'Policy key "rules[2].deny_arg" is not recognised; the keys allowed in a [[rules]] entry are: command, deny_args, args, reason, enforce, decision, justification.',
    );
  });
});

Deno.test("loadPolicy() refuses an unknown key inside an extra_patterns entry", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(
        MINIMAL + '[redaction]\nextra_patterns = [{ name = "a", regex = "b+", flags = "i" }]\n',
      ),
      'Policy key "redaction.extra_patterns[1].flags" is not recognised; the keys allowed in a [[redaction.extra_patterns]] entry are: name, regex.',
    );
  });
});

Deno.test("loadPolicy() treats a key named __proto__ as unknown, not as a prototype", async () => {
  await withScratch(async (s) => {
    const result = await s.load(MINIMAL + '[limits]\n"__proto__" = { timeout_ms = 1 }\n');
    assert.ok(!result.ok);
    assert.match(result.message, /^Policy key "limits.__proto__" is not recognised; /);
  });
});

Deno.test("loadPolicy() refuses a string where an integer is expected", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[limits]\ntimeout_ms = "30s"\n'),
      'Policy key "limits.timeout_ms" must be an integer from 1 to 86400000, got "30s".',
    );
  });
});

Deno.test("loadPolicy() refuses a number where a path is expected", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load("jail_root = 5\n"),
      'Policy key "jail_root" must be a non-empty string, got 5.',
    );
  });
});

Deno.test("loadPolicy() refuses a string where a boolean is expected", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[redaction]\nenabled = "true"\n'),
      'Policy key "redaction.enabled" must be true or false, got "true".',
    );
  });
});

Deno.test("loadPolicy() refuses a value where a table is expected", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + "limits = 5\n"),
      'Policy key "limits" must be a table, got 5.',
    );
  });
});

Deno.test("loadPolicy() refuses a TOML date anywhere, even where a table is expected", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + "limits = 1979-05-27\n"),
      'Policy key "limits" must be a table, got a date.',
    );
  });
});

Deno.test("loadPolicy() refuses a non-string entry in allowlist.commands", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[allowlist]\ncommands = ["ls", 5]\n'),
      'Policy key "allowlist.commands[2]" must be a non-empty string, got 5.',
    );
  });
});

Deno.test("loadPolicy() refuses a single string where a list of commands is expected", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[allowlist]\ncommands = "ls"\n'),
      'Policy key "allowlist.commands" must be an array of strings, got "ls".',
    );
  });
});

Deno.test("loadPolicy() refuses an unknown sandbox mode", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[sandbox]\nmode = "docker"\n'),
      'Policy key "sandbox.mode" must be one of "none", "bwrap", "auto", got "docker".',
    );
  });
});

Deno.test("loadPolicy() refuses an unknown audit_fail_mode in the file", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + 'audit_fail_mode = "lenient"\n'),
      'Policy key "audit_fail_mode" must be "closed" or "open", got "lenient".',
    );
  });
});

Deno.test("loadPolicy() refuses a [[rules]] entry without a reason", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(
        MINIMAL + '[allowlist]\ncommands = ["ls"]\n[[rules]]\ncommand = "ls"\ndeny_args = ["-R"]\n',
      ),
      'Policy key "rules[1].reason" is missing; it must be a non-empty string.',
    );
  });
});

Deno.test("loadPolicy() refuses a [[rules]] entry with no deny_args", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(
        MINIMAL +
          '[allowlist]\ncommands = ["ls"]\n[[rules]]\ncommand = "ls"\ndeny_args = []\nreason = "r"\n',
      ),
      'Policy key "rules[1].deny_args" must list at least one argument sequence, got an array.',
    );
  });
});

Deno.test("loadPolicy() refuses a deny_args entry that is only whitespace", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(
        MINIMAL +
          '[allowlist]\ncommands = ["ls"]\n[[rules]]\ncommand = "ls"\ndeny_args = ["-R", "  "]\nreason = "r"\n',
      ),
      'Policy key "rules[1].deny_args[2]" holds only whitespace.',
    );
  });
});

Deno.test("loadPolicy() refuses a rule for a command that is not allowlisted", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(
        MINIMAL +
          '[allowlist]\ncommands = ["ls"]\n[[rules]]\ncommand = "gti"\ndeny_args = ["push --force"]\nreason = "r"\n',
      ),
      'Policy key "rules[1].command" is "gti", which is not on the allowlist, so the rule would never apply.',
    );
  });
});

Deno.test("loadPolicy() refuses a path with a NUL character", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load('jail_root = "jail\\u0000x"\n'),
      'Policy key "jail_root" must not contain a NUL character, got "jail\\u0000x".',
    );
  });
});

for (
  const [toml, message] of [
    [
      "timeout_ms = 0",
      'Policy key "limits.timeout_ms" must be an integer from 1 to 86400000, got 0.',
    ],
    [
      "timeout_ms = -5",
      'Policy key "limits.timeout_ms" must be an integer from 1 to 86400000, got -5.',
    ],
    [
      "timeout_ms = 3_000_000_000",
      'Policy key "limits.timeout_ms" must be an integer from 1 to 86400000, got 3000000000.',
    ],
    [
      "timeout_ms = 1.5",
      'Policy key "limits.timeout_ms" must be an integer from 1 to 86400000, got 1.5.',
    ],
    [
      "timeout_ms = inf",
      'Policy key "limits.timeout_ms" must be an integer from 1 to 86400000, got Infinity.',
    ],
    [
      "timeout_ms = nan",
      'Policy key "limits.timeout_ms" must be an integer from 1 to 86400000, got NaN.',
    ],
    [
      "max_output_bytes = 0",
      'Policy key "limits.max_output_bytes" must be an integer from 1 to 268435456, got 0.',
    ],
    [
      "progress_interval_ms = 50",
      'Policy key "limits.progress_interval_ms" must be an integer from 100 to 600000, got 50.',
    ],
    [
      "foreground_ms = 0",
      'Policy key "limits.foreground_ms" must be an integer from 100 to 86400000, got 0.',
    ],
    [
      "max_timeout_ms = 1.5",
      'Policy key "limits.max_timeout_ms" must be an integer from 1 to 86400000, got 1.5.',
    ],
    [
      "timeout_ms = 5000\nmax_timeout_ms = 4000",
      'Policy key "limits.max_timeout_ms" (4000) must not be below "limits.timeout_ms" (5000).',
    ],
    [
      "job_output_bytes = 0",
      'Policy key "limits.job_output_bytes" must be an integer from 1 to 268435456, got 0.',
    ],
    [
      "job_retention_s = 5",
      'Policy key "limits.job_retention_s" must be an integer from 10 to 604800, got 5.',
    ],
    [
      'inline_output_bytes = "32k"',
      'Policy key "limits.inline_output_bytes" must be an integer from 256 to 268435456, got "32k".',
    ],
    [
      "max_output_bytes = 1_000_000_000_000",
      'Policy key "limits.max_output_bytes" must be an integer from 1 to 268435456, got 1000000000000.',
    ],
    [
      "max_concurrent = 0",
      'Policy key "limits.max_concurrent" must be an integer from 1 to 256, got 0.',
    ],
    [
      "queue_max = -1",
      'Policy key "limits.queue_max" must be an integer from 0 to 4096, got -1.',
    ],
    [
      "queue_max = 5000",
      'Policy key "limits.queue_max" must be an integer from 0 to 4096, got 5000.',
    ],
    [
      "queue_wait_ms = 1.5",
      'Policy key "limits.queue_wait_ms" must be an integer from 0 to 600000, got 1.5.',
    ],
    [
      "queue_wait_ms = 600_001",
      'Policy key "limits.queue_wait_ms" must be an integer from 0 to 600000, got 600001.',
    ],
    [
      "cpu_seconds = 0",
      'Policy key "limits.cpu_seconds" must be an integer from 1 to 604800, got 0.',
    ],
    [
      "address_space_bytes = 4096",
      'Policy key "limits.address_space_bytes" must be an integer from 1048576 to 281474976710656, got 4096.',
    ],
    [
      "max_processes = -1",
      'Policy key "limits.max_processes" must be an integer from 1 to 4194304, got -1.',
    ],
    [
      "file_size_bytes = 0",
      'Policy key "limits.file_size_bytes" must be an integer from 1 to 9007199254740991, got 0.',
    ],
    [
      "open_files = 2",
      'Policy key "limits.open_files" must be an integer from 3 to 1048576, got 2.',
    ],
  ] as const
) {
  Deno.test(`loadPolicy() refuses [limits] ${toml}`, async () => {
    await withScratch(async (s) => {
      assertRefused(await s.load(`${MINIMAL}[limits]\n${toml}\n`), message);
    });
  });
}

Deno.test("loadPolicy() refuses http.max_http_request_bytes above 1 GiB and negative", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + "[http]\nmax_http_request_bytes = -1\n"),
      'Policy key "http.max_http_request_bytes" must be an integer from 0 to 1073741824, got -1.',
    );
    assertRefused(
      await s.load(MINIMAL + "[http]\nmax_registration_bytes = 10\n"),
      'Policy key "http.max_registration_bytes" must be an integer from 256 to 1048576, got 10.',
    );
    assertRefused(
      await s.load(MINIMAL + "[http]\nmax_concurrent_per_client = 0\n"),
      'Policy key "http.max_concurrent_per_client" must be an integer from 1 to 256, got 0.',
    );
  });
});
