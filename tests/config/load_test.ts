/**
 * The whole loaded policy: defaults for every field, deep freezing, the
 * shipped policy.toml, and the promise never to throw.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { DEFAULT_CHILD_PATH, loadPolicy, type Policy } from "../../src/config/mod.ts";
import { assertLoaded, MINIMAL, withScratch } from "./_fixture.ts";

const SHIPPED_POLICY = fileURLToPath(new URL("../../policy.toml", import.meta.url));

Deno.test("loadPolicy() fills every field with its documented default", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL, { HOME: "/home/op" }));
    assert.deepEqual(
      {
        ...policy,
        allowlist: [...policy.allowlist],
        denylist: [...policy.denylist],
        disabledGuards: [...policy.disabledGuards],
        childEnv: { ...policy.childEnv },
        argSchemas: [...policy.argSchemas],
      },
      {
        policyFile: `${s.dir}/policy.toml`,
        jailRoot: s.jail,
        auditLog: `${s.dir}/htmcp-audit.jsonl`,
        auditFailMode: "closed",
        stateDir: null,
        allowlist: [],
        denylist: [],
        rules: [],
        tests: [],
        argSchemas: [],
        disabledGuards: [],
        confineArgs: true,
        limits: {
          timeoutMs: 30_000,
          maxOutputBytes: 1_048_576,
          maxConcurrent: 4,
          queueMax: 64,
          queueWaitMs: 10_000,
          cpuSeconds: null,
          addressSpaceBytes: null,
          maxProcesses: null,
          fileSizeBytes: null,
          openFiles: null,
          progressIntervalMs: 5_000,
          foregroundMs: 45_000,
          maxTimeoutMs: 600_000,
          jobOutputBytes: 1_048_576,
          jobRetentionMs: 3_600_000,
          inlineOutputBytes: 32_768,
        },
        redaction: { enabled: true, entropyFallback: false, extraPatterns: [] },
        envPass: ["PATH", "HOME", "LANG"],
        childEnv: { HOME: "/home/op", PATH: DEFAULT_CHILD_PATH },
        showJailPath: false,
        sessions: { idleTtlMs: 1_800_000, maxPerCaller: 8 },
        links: {
          enabled: true,
          maxFileBytes: 10_485_760,
          defaultTtlMs: 3_600_000,
          maxTtlMs: 86_400_000,
          maxLinksPerCaller: 32,
        },
        sandbox: {
          mode: "bwrap",
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: false,
          user: null,
        },
        http: {
          listen: null,
          baseUrl: null,
          tlsCert: null,
          tlsKey: null,
          allowedOrigins: [],
          allowedHosts: [],
          maxRequestBytes: 16_000_000,
          maxRegistrationBytes: 16_384,
          maxConcurrentPerClient: 2,
          maxConnections: 0,
          headerTimeoutMs: 10_000,
          idleTimeoutMs: 120_000,
        },
        auth: {
          mode: "oauth",
          allowLocalhostBypass: false,
          allowPlainPkce: false,
          accessTokenTtlSeconds: 3600,
          clientIdMetadataAllow: [],
          external: null,
        },
        warnings: ["The allowlist is empty, so every command will be refused."],
      },
    );
  });
});

Deno.test("loadPolicy() reads every scalar key when it is set", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        MINIMAL + '[allowlist]\ncommands = ["find"]\n' +
          "[limits]\ntimeout_ms = 5000\nmax_output_bytes = 2048\nmax_concurrent = 2\n" +
          "queue_max = 5\nqueue_wait_ms = 250\n" +
          "cpu_seconds = 10\naddress_space_bytes = 1073741824\nmax_processes = 64\n" +
          "file_size_bytes = 1000\nopen_files = 64\n" +
          "progress_interval_ms = 250\nforeground_ms = 2000\nmax_timeout_ms = 9000\n" +
          "job_output_bytes = 4096\njob_retention_s = 60\ninline_output_bytes = 512\n" +
          "[redaction]\nenabled = false\nentropy_fallback = true\n" +
          '[paths]\nconfine_args = false\n[guards]\ndisable = ["find-exec", "find-exec"]\n' +
          '[describe]\nshow_jail_path = true\n[sandbox]\nmode = "bwrap"\nnetwork = true\n',
      ),
    );
    assert.deepEqual(policy.limits, {
      timeoutMs: 5000,
      maxOutputBytes: 2048,
      maxConcurrent: 2,
      queueMax: 5,
      queueWaitMs: 250,
      cpuSeconds: 10,
      addressSpaceBytes: 1_073_741_824,
      maxProcesses: 64,
      fileSizeBytes: 1000,
      openFiles: 64,
      progressIntervalMs: 250,
      foregroundMs: 2000,
      maxTimeoutMs: 9000,
      jobOutputBytes: 4096,
      jobRetentionMs: 60_000,
      inlineOutputBytes: 512,
    });
    assert.equal(policy.redaction.enabled, false);
    assert.equal(policy.redaction.entropyFallback, true);
    assert.equal(policy.confineArgs, false);
    assert.deepEqual([...policy.disabledGuards], ["find-exec"]);
    assert.equal(policy.showJailPath, true);
    assert.deepEqual(policy.sandbox, {
      mode: "bwrap",
      network: "host",
      networkAllow: [],
      acceptPathCheckOnly: false,
      user: null,
    });
    for (
      const key of [
        'Policy key "paths.confine_args" is false',
        'Policy key "redaction.enabled" is false',
        'Guard "find-exec" is disabled, so "find" may be run',
      ]
    ) {
      assert.ok(policy.warnings.some((w) => w.startsWith(key)), key);
    }
  });
});

/** Every object reachable from the policy, except RegExp instances (see freeze.ts). */
function reachable(root: unknown, seen = new Set<object>()): object[] {
  if (root === null || typeof root !== "object" || seen.has(root) || root instanceof RegExp) {
    return [];
  }
  seen.add(root);
  const inner: unknown[] = root instanceof Map || root instanceof Set
    ? [...root.values()]
    : Reflect.ownKeys(root).map((k) => (root as Record<PropertyKey, unknown>)[k]);
  for (const value of inner) reachable(value, seen);
  return [...seen];
}

Deno.test("loadPolicy() returns a deeply frozen policy whose tables refuse changes", async () => {
  await withScratch(async (s) => {
    const policy: Policy = assertLoaded(
      await s.load(
        MINIMAL + '[allowlist]\ncommands = ["ls"]\n[denylist]\ncommands = ["rm"]\n' +
          '[[rules]]\ncommand = "ls"\ndeny_args = ["-R"]\nreason = "r"\n' +
          '[redaction]\nextra_patterns = [{ name = "x", regex = "xx+" }]\n',
      ),
    );
    const objects = reachable(policy);
    assert.ok(objects.length >= 20, `only ${objects.length} objects reached`);
    for (const object of objects) {
      assert.ok(Object.isFrozen(object), `not frozen: ${Deno.inspect(object)}`);
    }

    const allowlist = policy.allowlist as Map<string, unknown>;
    const denylist = policy.denylist as Set<string>;
    const ls = policy.allowlist.get("ls");
    assert.throws(() => allowlist.set("sh", ls), TypeError);
    assert.throws(() => allowlist.delete("ls"), TypeError);
    assert.throws(() => allowlist.clear(), TypeError);
    assert.throws(() => denylist.delete("rm"), TypeError);
    assert.throws(() => denylist.add("x"), TypeError);
    assert.throws(() => (policy.disabledGuards as Set<string>).add("x"), TypeError);
    assert.throws(() => (policy.rules as unknown[]).push({}), TypeError);
    assert.throws(() => {
      (policy.childEnv as Record<string, string>)["LD_PRELOAD"] = "/tmp/x.so";
    }, TypeError);
    assert.throws(() => {
      (policy.limits as { timeoutMs: number }).timeoutMs = 1;
    }, TypeError);
    assert.deepEqual([...policy.allowlist.keys()], ["ls"]);
    assert.deepEqual([...policy.denylist], ["rm"]);
  });
});

Deno.test("loadPolicy() loads the shipped policy.toml as committed", async () => {
  const policy = assertLoaded(await loadPolicy({ policyFile: SHIPPED_POLICY, env: {} }));
  assert.equal(policy.jailRoot, fileURLToPath(new URL("../../workspace", import.meta.url)));
  assert.equal(
    policy.auditLog,
    fileURLToPath(new URL("../../audit/htmcp-audit.jsonl", import.meta.url)),
  );
  assert.deepEqual(policy.warnings, []);
  assert.ok(policy.allowlist.has("ls"));
  assert.ok(policy.denylist.has("rm"));
  assert.equal(policy.allowlist.has("rm"), false);
  assert.equal(policy.auditFailMode, "closed");
  assert.equal(policy.sandbox.mode, "bwrap");
  for (const command of policy.allowlist.values()) {
    assert.ok(
      DEFAULT_CHILD_PATH.split(":").some((dir) => command.path === `${dir}/${command.name}`),
    );
  }
});

Deno.test("loadPolicy() loads the shipped policy.toml with a throwaway jail from HTMCP_JAIL_ROOT", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await loadPolicy({
        policyFile: null,
        env: {
          HTMCP_POLICY_FILE: SHIPPED_POLICY,
          HTMCP_JAIL_ROOT: s.jail,
          HTMCP_AUDIT_LOG: `${s.dir}/a.jsonl`,
        },
      }),
    );
    assert.equal(policy.jailRoot, s.jail);
    assert.equal(policy.auditLog, `${s.dir}/a.jsonl`);
  });
});

Deno.test("loadPolicy() returns a refusal instead of throwing on an unexpected error", async () => {
  const hostile = new Proxy({}, {
    has() {
      throw new Error("environment exploded");
    },
    getOwnPropertyDescriptor() {
      throw new Error("environment exploded");
    },
  });
  const result = await loadPolicy({ policyFile: null, env: hostile });
  assert.deepEqual(result, {
    ok: false,
    message: "Loading the policy failed unexpectedly: environment exploded.",
  });
});
