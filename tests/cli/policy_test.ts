/**
 * `htmcp policy test` / `htmcp policy lint` and the startup gate of
 * `[[tests]]`, through the launcher an operator (or CI) runs, on real files.
 */
import assert from "node:assert/strict";
import { LAUNCH, policyToml, serverEnv, startHarness } from "../_helpers/stdio_harness.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function htmcp(args: string[], stdin: "null" | "piped" = "null"): Promise<Run> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, ...args],
    env: serverEnv("/tmp"),
    clearEnv: true,
    stdin,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // A server that passed its tests would wait on stdin: closing it ends it.
  if (stdin === "piped") await child.stdin.close();
  const out = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

const PASSING_TESTS = `
[[tests]]
name = "listing is allowed"
command = "ls -la"
expect = "OK"

[[tests]]
command = "rm -rf /"
expect = "POLICY_DENIED"
reason_contains = "denylist"

[[tests]]
command = "cat /etc/passwd"
expect = "PATH_ESCAPE"

[[tests]]
command = "ls"
cwd = "../"
expect = "CWD_ESCAPE"
`;

async function tempPolicy(
  extra: string,
  allow = ["ls", "cat", "touch"],
  sandbox: "bwrap" | "none" = "bwrap",
) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-policy-cli-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  const policy = `${dir}/policy.toml`;
  await Deno.writeTextFile(
    policy,
    policyToml(jail, `${dir}/audit/audit.jsonl`, { allow, extraToml: extra, sandbox }),
  );
  await Deno.mkdir(`${dir}/audit`);
  return {
    dir,
    policy,
    jail,
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("htmcp policy test passes a policy whose [[tests]] hold, one line per test", async () => {
  await using temp = await tempPolicy(PASSING_TESTS);
  const run = await htmcp(["policy", "test", temp.policy]);
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.match(run.stdout, /^ok {3}listing is allowed: OK$/m);
  assert.match(run.stdout, /^ok {3}rm -rf \/: POLICY_DENIED$/m);
  assert.match(run.stdout, /^4 passed, 0 failed$/m);
});

Deno.test("htmcp policy test fails with exit 1 naming the test whose verdict changed", async () => {
  await using temp = await tempPolicy(`${PASSING_TESTS}
[[tests]]
name = "cat must be refused"
command = "cat notes.txt"
expect = "POLICY_DENIED"
`);
  const run = await htmcp(["policy", "test", temp.policy]);
  assert.equal(run.code, 1);
  assert.match(run.stdout, /FAIL Policy test "cat must be refused" expected POLICY_DENIED/);
  assert.match(run.stdout, /^4 passed, 1 failed$/m);
  const json = await htmcp(["policy", "test", temp.policy, "--json"]);
  assert.equal(json.code, 1);
  const report = JSON.parse(json.stdout);
  assert.equal(report.failed, 1);
  assert.equal(report.tests[4].got, "OK");
});

Deno.test("htmcp policy test checks reason_contains", async () => {
  await using temp = await tempPolicy(`
[[tests]]
command = "rm -rf /"
expect = "POLICY_DENIED"
reason_contains = "no such words"
`);
  const run = await htmcp(["policy", "test", temp.policy]);
  assert.equal(run.code, 1);
  assert.match(run.stdout, /expected a reason containing "no such words"/);
});

Deno.test("a [[tests]] entry with an unknown expect code stops the policy from loading", async () => {
  await using temp = await tempPolicy(`
[[tests]]
command = "ls"
expect = "ALLOWED"
`);
  const run = await htmcp(["policy", "test", temp.policy]);
  // The launcher loads the policy first and stops with 1 and the loader's sentence.
  assert.equal(run.code, 1);
  assert.match(run.stderr, /Policy key "tests\[1\]\.expect" must be "OK"/);
});

Deno.test("serve refuses to start when an embedded policy test fails, naming the test", async () => {
  await using temp = await tempPolicy(`
[[tests]]
name = "ls must be refused"
command = "ls"
expect = "POLICY_DENIED"
`);
  const run = await htmcp(["serve", "--policy", temp.policy], "piped");
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /Policy test "ls must be refused" expected POLICY_DENIED/);
  assert.match(run.stderr, /does not start until the policy passes its tests/);
  // Nothing was served, so nothing was audited.
  await assert.rejects(Deno.stat(`${temp.dir}/audit/audit.jsonl`), Deno.errors.NotFound);
});

Deno.test("htmcp policy lint reports interpreters, unguarded escapes, dead rules and secret env", async () => {
  await using temp = await tempPolicy(
    `
[[rules]]
command = "dd"
deny_args = ["of"]
reason = "no writing"

[env]
pass = ["HOME", "GITHUB_TOKEN"]
`,
    ["ls", "python3", "tee", "dd", "env"],
    "none",
  );
  const run = await htmcp(["policy", "lint", temp.policy, "--json"]);
  assert.equal(run.code, 1, run.stderr);
  const ids = JSON.parse(run.stdout).findings.map((f: { id: string }) => f.id);
  for (
    const id of [
      "interpreter-allowlisted",
      "unguarded-escape",
      "rule-never-matches",
      "secret-env-passed",
      "always-refused",
      "sandbox-off",
      "no-policy-tests",
    ]
  ) {
    assert.ok(ids.includes(id), `${id} missing from ${ids.join(", ")}`);
  }
  const text = await htmcp(["policy", "lint", temp.policy]);
  assert.match(text.stdout, /^HIGH interpreter-allowlisted: "python3" is allowlisted/m);
  assert.match(text.stdout, /^ {2}fix: /m);
});

Deno.test("htmcp policy lint passes the shipped policy with no high finding", async () => {
  const shipped = new URL("../../policy.toml", import.meta.url).pathname;
  const run = await htmcp(["policy", "lint", shipped, "--json"]);
  const findings = JSON.parse(run.stdout).findings as { severity: string; id: string }[];
  assert.deepEqual(findings.filter((f) => f.severity === "high").map((f) => f.id), []);
  assert.equal(run.code, 0);
});

Deno.test("htmcp policy diff lists the commands whose verdict changes, from a replayed log and a file", async () => {
  await using temp = await tempPolicy(PASSING_TESTS, ["ls", "cat", "touch"]);
  const stricter = `${temp.dir}/new.toml`;
  await Deno.writeTextFile(
    stricter,
    policyToml(temp.jail, `${temp.dir}/audit/audit.jsonl`, {
      allow: ["ls", "cat"],
      extraToml: `
[[rules]]
command = "ls"
deny_args = ["-R"]
reason = "recursive listings flood the output"
`,
    }),
  );
  // A log recorded by the real server under the old policy.
  const log = `${temp.dir}/recorded.jsonl`;
  const attempt = (command: string) =>
    JSON.stringify({ seq: 1, kind: "attempt", command_raw: command, cwd: temp.jail });
  await Deno.writeTextFile(
    log,
    [attempt("touch new.txt"), attempt("ls -la"), "not json", attempt("ls -R")].join("\n") + "\n",
  );
  const commands = `${temp.dir}/commands.txt`;
  await Deno.writeTextFile(commands, "# examples\ncat notes.txt\nls -R src\n");
  const run = await htmcp([
    "policy",
    "diff",
    temp.policy,
    stricter,
    "--replay",
    log,
    "--commands",
    commands,
  ]);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stdout, /^"touch new.txt": OK -> POLICY_DENIED$/m);
  assert.match(run.stdout, /^"ls -R": OK -> POLICY_DENIED$/m);
  assert.match(run.stdout, /^"ls -R src": OK -> POLICY_DENIED$/m);
  assert.match(run.stdout, /new: .*recursive listings flood the output/);
  assert.doesNotMatch(run.stdout, /"ls -la"/);
  assert.match(run.stdout, /^3 of 8 commands change verdict\.$/m);
  const same = await htmcp(["policy", "diff", temp.policy, temp.policy]);
  assert.equal(same.code, 0, same.stderr);
  assert.match(same.stdout, /^0 of 4 commands change verdict\.$/m);
});

Deno.test("htmcp policy suggest groups the refusals a real server logged, and edits nothing", async () => {
  const harness = await startHarness({ allow: ["ls", "cat"] });
  try {
    for (
      const command of ["git status", "git log", "python3 -c 1", "rm -rf x", "cat /etc/passwd"]
    ) {
      const result = await harness.call("run_command", { command });
      assert.equal(result.ok, false, command);
    }
    const before = await Deno.readTextFile(harness.policyPath);
    const run = await htmcp([
      "policy",
      "suggest",
      "--from",
      harness.auditLog,
      "--policy",
      harness.policyPath,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^allowlist git: 2 refused$/m);
    assert.match(run.stdout, /e\.g\. "git status"/);
    assert.match(run.stdout, /Consider adding "git" to \[allowlist\] commands/);
    assert.match(run.stdout, /"python3" runs any code it is given/);
    assert.match(run.stdout, /^count PATH_ESCAPE: 1 refused$/m);
    assert.doesNotMatch(run.stdout, /Consider adding "rm"/);
    assert.match(run.stdout, /Nothing was changed/);
    assert.equal(await Deno.readTextFile(harness.policyPath), before);
  } finally {
    await harness.close();
  }
});

Deno.test("htmcp policy test prints the policy hash, the same for the same policy spelled differently", async () => {
  await using temp = await tempPolicy(PASSING_TESTS);
  const first = await htmcp(["policy", "test", temp.policy, "--json"]);
  const text = await Deno.readTextFile(temp.policy);
  await Deno.writeTextFile(temp.policy, `# a comment\n\n${text.replaceAll("\n", "\n\n")}`);
  const second = await htmcp(["policy", "test", temp.policy, "--json"]);
  const hash = JSON.parse(first.stdout).policy_hash;
  assert.match(hash, /^sha256:[0-9a-f]{64}$/);
  assert.equal(JSON.parse(second.stdout).policy_hash, hash);
  await Deno.writeTextFile(temp.policy, text.replace('"touch"', '"touch", "wc"'));
  const third = await htmcp(["policy", "test", temp.policy, "--json"]);
  assert.notEqual(JSON.parse(third.stdout).policy_hash, hash);
});
