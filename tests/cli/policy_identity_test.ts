/**
 * Policy identity and rollout, through real servers and the launcher: the
 * policy hash on every audit record, in describe_policy and in `htmcp
 * check`; an edited policy file noticed by a running server that keeps its
 * frozen policy; `htmcp check` printing the lint; `htmcp audit show
 * --warned` listing what a warn rule would have refused.
 */
import assert from "node:assert/strict";
import { exists, LAUNCH, policyToml, serverEnv, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function htmcp(args: string[]): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, ...args],
    env: { ...serverEnv("/tmp"), NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

async function hashOf(policyFile: string): Promise<string> {
  const run = await htmcp(["policy", "test", policyFile, "--json"]);
  const hash = JSON.parse(run.stdout).policy_hash as string;
  assert.match(hash, /^sha256:[0-9a-f]{64}$/);
  return hash;
}

/** Waits (bounded) until `predicate` holds, polling every 100 ms. */
async function until(
  predicate: () => boolean,
  what: string,
  detail: () => string = () => "",
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

Deno.test("every audit record of a real server carries the policy hash describe_policy and policy test report", async () => {
  const h = await startHarness({ allow: ["ls", "cat"] });
  try {
    await assertSandboxMode(h, "bwrap");
    const described = await h.describePolicy();
    const hash = await hashOf(h.policyPath);
    assert.equal(described.policy_hash, hash);
    assert.equal((await h.call("run_command", { command: "ls" })).ok, true);
    assert.equal((await h.call("run_command", { command: "touch x" })).code, "POLICY_DENIED");
    const records = await h.records();
    assert.ok(records.length >= 4, JSON.stringify(records));
    for (const record of records) assert.equal(record.policy_hash, hash, JSON.stringify(record));
    // The watch's first check judged the unchanged file: nothing to report.
    assert.equal(records.some((record) => record.event === "policy_changed"), false);
    assert.doesNotMatch(h.stderr(), /policy file .* changed/);
    const verify = await htmcp(["audit", "verify", h.auditLog]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  } finally {
    await h.close();
  }
});

Deno.test("an edited policy file is reported once on stderr and audited; the server keeps judging by its frozen policy", async () => {
  const h = await startHarness({ allow: ["ls", "cat"], files: { "notes.txt": "hello\n" } });
  try {
    await assertSandboxMode(h, "bwrap");
    const oldHash = (await h.describePolicy()).policy_hash as string;
    const original = await Deno.readTextFile(h.policyPath);
    const narrowed = original.replace('commands = ["ls","cat"]', 'commands = ["ls"]');
    assert.notEqual(narrowed, original);
    await Deno.writeTextFile(h.policyPath, narrowed);
    const newHash = await hashOf(h.policyPath);
    assert.notEqual(newHash, oldHash);
    await until(
      () => h.stderr().includes(`changed (now ${newHash})`),
      "the restart notice",
      () => h.stderr(),
    );
    assert.match(h.stderr(), new RegExp(`keeps running ${oldHash} until it is restarted`));

    // A comment is not a change of policy: no second notice, no second record.
    await Deno.writeTextFile(h.policyPath, `# reviewed\n${narrowed}`);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(count(h.stderr(), "changed (now"), 1, h.stderr());

    // Frozen: what the edit took away still runs, what it never allowed is still refused.
    const cat = await h.call("run_command", { command: "cat notes.txt" });
    assert.equal(cat.ok, true, JSON.stringify(cat));
    assert.equal(cat.stdout, "hello\n");
    const touched = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(touched.code, "POLICY_DENIED");
    assert.equal(await exists(`${h.jail}/canary.txt`), false);
    assert.equal((await h.describePolicy()).policy_hash, oldHash);

    const records = await h.records();
    const changed = records.filter((r) => r.event === "policy_changed");
    assert.equal(changed.length, 1, JSON.stringify(changed));
    assert.equal(changed[0]!.old_policy_hash, oldHash);
    assert.equal(changed[0]!.new_policy_hash, newHash);
    assert.equal(changed[0]!.action, "restart_needed");
    const refused = records.find((r) =>
      r.kind === "attempt" && r.command_raw === "touch canary.txt"
    );
    assert.equal(refused?.code, "POLICY_DENIED");
    assert.equal(refused?.policy_hash, oldHash);

    // A file this server cannot load (broken here) is a change too, named by its bytes.
    const broken = `${narrowed}\nnot toml [\n`;
    await Deno.writeTextFile(h.policyPath, broken);
    const bytes = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(broken)),
    );
    const fileHash = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    await until(
      () => h.stderr().includes(`changed (file sha256 ${fileHash}) and does not load`),
      "the unloadable-file notice",
      () => h.stderr(),
    );
    // The line is printed, then the record written: wait for the record too.
    let all: Record<string, unknown>[] = [];
    for (let tries = 0; tries < 100 && all.length < 2; tries++) {
      all = (await h.records()).filter((r) => r.event === "policy_changed");
      if (all.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(all.length, 2, JSON.stringify(all));
    assert.equal(all[1]!.new_policy_hash, null);
    assert.equal(all[1]!.new_file_sha256, fileHash);
    assert.notEqual(all[1]!.reason, "");
    const verify = await htmcp(["audit", "verify", h.auditLog]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  } finally {
    await h.close();
  }
});

Deno.test("htmcp check prints the policy hash and the lint's high findings, and keeps its exit code", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-check-lint-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/audit`);
    const policy = `${dir}/policy.toml`;
    await Deno.writeTextFile(
      policy,
      policyToml(`${dir}/jail`, `${dir}/audit/audit.jsonl`, { allow: ["ls", "python3"] }),
    );
    const run = await htmcp(["check", "--policy", policy]);
    // The layers are in force, so check passes: findings are advice.
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, new RegExp(`^Policy hash: ${await hashOf(policy)}$`, "m"));
    assert.match(run.stdout, /^Lint: \d+ finding\(s\), 1 high/m);
    assert.match(run.stdout, /^ {2}HIGH interpreter-allowlisted: "python3" is allowlisted/m);
    assert.match(run.stdout, /^ {4}fix: Remove "python3"/m);
    assert.match(run.stdout, /Result: the Deno permission layer is in force\./);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("htmcp audit show --warned lists exactly the calls a warn rule would have refused, from a real server's log", async () => {
  const h = await startHarness({
    allow: ["ls", "cat"],
    files: { "notes.txt": "hello\n" },
    extraToml: `
[[rules]]
command = "ls"
deny_args = ["-R"]
reason = "recursive listings flood the output"
enforce = "warn"
`,
  });
  try {
    await assertSandboxMode(h, "bwrap");
    const warned = await h.call("run_command", { command: "ls -R" });
    assert.equal(warned.ok, true, JSON.stringify(warned));
    assert.match(warned.policy_reason, /would have refused this command/);
    assert.equal((await h.call("run_command", { command: "ls -la" })).ok, true);
    assert.equal((await h.call("run_command", { command: "cat notes.txt" })).ok, true);
    assert.equal((await h.call("run_command", { command: "cat /etc/passwd" })).ok, false);
    const run = await htmcp(["audit", "show", "--warned", "--json", h.auditLog]);
    assert.equal(run.code, 0, run.stderr);
    const rows = run.stdout.split("\n").filter((line) => line !== "").map((l) => JSON.parse(l));
    assert.deepEqual(rows.map((row) => row.command), ["ls -R"]);
    const text = await htmcp(["audit", "show", "--warned", "--no-color", h.auditLog]);
    assert.match(text.stdout, /ls -R/);
    assert.doesNotMatch(text.stdout, /ls -la|cat notes/);
  } finally {
    await h.close();
  }
});
