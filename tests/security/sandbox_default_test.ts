/**
 * The kernel sandbox is the default and never silently absent: through the
 * real CLI and the real MCP client, the quick-start jail works in bwrap mode
 * (writes inside succeed, host secrets stay out), mode none starts only with
 * its explicit opt-in and then says so everywhere, and a jail that no
 * ordinary uid could use stops the server with the fix instead of running
 * commands as root or unsandboxed.
 */
import { exists } from "../_helpers/exists.ts";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CommandResult } from "../../src/result/codes.ts";
import { PATH_CHECK_ONLY_TAIL, PATH_CHECK_ONLY_WARNING } from "../../src/sandbox/mod.ts";
import { makeDemoJail } from "../../scripts/_jail.ts";
import { LAUNCH, policyToml, REPO, serverEnv, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, prepareJail, TEST_JAIL_UID } from "../_helpers/jail.ts";

/** True when the tests run as root (only root may give a file away). */
async function runningAsRoot(): Promise<boolean> {
  const file = await Deno.makeTempFile();
  try {
    await Deno.chown(file, TEST_JAIL_UID, TEST_JAIL_UID);
    return true;
  } catch {
    return false;
  } finally {
    await Deno.remove(file);
  }
}
const AS_ROOT = await runningAsRoot();

/** Runs `htmcp ARGS` through the task launcher (the generated permission set), stdin closed. */
async function htmcp(args: readonly string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, ...args],
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** A temp folder with `jail/` (created by `makeJail`) and a policy whose `[sandbox]` is `sandbox`. */
async function scene(sandbox: string, makeJail: (jail: string) => Promise<void>) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-sbx-" }));
  await Deno.chmod(dir, 0o711);
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await makeJail(jail);
  const policy = `${dir}/policy.toml`;
  const toml = policyToml(jail, `${dir}/audit.jsonl`, { allow: ["ls", "touch"] })
    .replace(/\[sandbox\]\n[^[]*/, `${sandbox}\n`);
  await Deno.writeTextFile(policy, toml);
  return { dir, jail, policy, env: serverEnv(dir) };
}

Deno.test("the quick-start jail under the shipped policy: touch, mkdir and cp succeed in bwrap, /etc/shadow stays out", async () => {
  const jail = await makeDemoJail();
  const state = await Deno.makeTempDir({ prefix: "htmcp-sbx-state-" });
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", `${REPO}policy.toml`],
    env: {
      ...serverEnv(state),
      HTMCP_JAIL_ROOT: jail,
      HTMCP_AUDIT_LOG: `${state}/audit.jsonl`,
      HTMCP_STATE_DIR: state,
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const client = new Client({ name: "sandbox-default", version: "1" });
  try {
    await client.connect(transport);
    const call = async (command: string) =>
      (await client.callTool({ name: "run_command", arguments: { command } }))
        .structuredContent as unknown as CommandResult;
    await assertSandboxMode({
      describePolicy: async () =>
        (await client.callTool({ name: "describe_policy", arguments: {} }))
          .structuredContent as { sandbox: string },
    }, "bwrap");
    assert.match(
      stderr,
      /sandbox: Commands run in the kernel sandbox \(\[sandbox\] mode = "bwrap"\)/,
    );

    for (const command of ["touch made.txt", "mkdir -p deep/er", "cp notes.txt deep/er/copy.txt"]) {
      const result = await call(command);
      assert.equal(result.code, "OK", `${command}: ${JSON.stringify(result)}`);
      assert.equal(result.exit_code, 0, `${command}: ${result.stderr}`);
    }
    const made = await Deno.stat(`${jail}/made.txt`);
    assert.ok(made.isFile);
    // Commands ran as the jail's owner, not as root.
    assert.equal(made.uid, (await Deno.stat(jail)).uid);
    if (AS_ROOT) assert.equal(made.uid, TEST_JAIL_UID);
    assert.equal(
      await Deno.readTextFile(`${jail}/deep/er/copy.txt`),
      await Deno.readTextFile(`${jail}/notes.txt`),
    );

    const shadow = await call("cat /etc/shadow");
    assert.equal(shadow.ok, false, JSON.stringify(shadow));
    assert.equal(shadow.code, "PATH_ESCAPE");
    assert.equal(shadow.stdout, "");
    const audit = await Deno.readTextFile(`${state}/audit.jsonl`);
    assert.match(audit, /"command_raw":"cat \/etc\/shadow".*"code":"PATH_ESCAPE"/);
  } finally {
    await client.close();
    await Deno.remove(jail, { recursive: true });
    await Deno.remove(state, { recursive: true });
  }
});

Deno.test("mode none without accept_path_check_only refuses to start with one sentence naming both keys", async () => {
  const s = await scene('[sandbox]\nmode = "none"', prepareJail);
  try {
    const run = await htmcp(["serve", "--policy", s.policy], s.env);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'htmcp: Policy key "sandbox.mode" is "none", which runs commands without the kernel sandbox so the jail is only advisory; set [sandbox] accept_path_check_only = true to accept that, or use mode = "bwrap".\n',
    );
    assert.equal(await exists(`${s.dir}/audit.jsonl`), false);
  } finally {
    await Deno.remove(s.dir, { recursive: true });
  }
});

Deno.test("with accept_path_check_only the warning is at startup, in check, describe_policy, the instructions and every policy_reason", async () => {
  const h = await startHarness({ sandbox: "none", allow: ["echo", "touch"] });
  try {
    await assertSandboxMode(h, "none");
    assert.ok(h.stderr().includes(`htmcp: warning: ${PATH_CHECK_ONLY_WARNING}`), h.stderr());
    assert.match(h.stderr(), /htmcp: sandbox: THE KERNEL SANDBOX IS OFF/);
    assert.match(
      h.client.getInstructions() ?? "",
      /The kernel sandbox is OFF .* the jail is advisory/,
    );
    const described = await h.describePolicy();
    assert.match(described.sandbox, /^The kernel sandbox is OFF \(\[sandbox\] mode = "none"\)/);

    const ran = await h.call("run_command", { command: "echo hi" });
    assert.equal(ran.code, "OK");
    assert.ok(ran.policy_reason.endsWith(` ${PATH_CHECK_ONLY_TAIL}`), ran.policy_reason);
    const refused = await h.call("run_command", { command: "rm -rf /" });
    assert.equal(refused.code, "POLICY_DENIED");
    assert.ok(refused.policy_reason.endsWith(` ${PATH_CHECK_ONLY_TAIL}`), refused.policy_reason);
    const explained = await h.call("explain_command", { command: "echo hi" });
    assert.ok(explained.policy_reason.endsWith(` ${PATH_CHECK_ONLY_TAIL}`));

    const check = await htmcp(["check", "--policy", h.policyPath], serverEnv(h.dir));
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.ok(check.stdout.includes(`warning: ${PATH_CHECK_ONLY_WARNING}`), check.stdout);
    assert.match(check.stdout, /Sandbox: THE KERNEL SANDBOX IS OFF/);
  } finally {
    await h.close();
  }
});

Deno.test("bwrap mode reports itself in describe_policy and check, with no advisory tail", async () => {
  const h = await startHarness({ allow: ["echo"] });
  try {
    await assertSandboxMode(h, "bwrap");
    const ran = await h.call("run_command", { command: "echo hi" });
    assert.equal(ran.code, "OK");
    assert.ok(!ran.policy_reason.includes(PATH_CHECK_ONLY_TAIL));
    assert.equal(h.client.getInstructions()?.includes("OFF"), false);
    const check = await htmcp(["check", "--policy", h.policyPath], serverEnv(h.dir));
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /Sandbox: Commands run in the kernel sandbox/);
    assert.doesNotMatch(check.stdout, /SANDBOX IS OFF/);
  } finally {
    await h.close();
  }
});

Deno.test({
  name:
    "a root server with a root-owned jail and no [sandbox] user refuses to start, saying the fix",
  ignore: !AS_ROOT,
  async fn() {
    for (const sandbox of ['[sandbox]\nmode = "bwrap"', PATH_CHECK_ONLY_SANDBOX]) {
      const s = await scene(sandbox, async () => {});
      try {
        const expected =
          `Cannot start: the server runs as root and the jail root "${s.jail}" is owned by root, and commands never run as root; chown the jail to a service user (for example "chown -R htmcp: ${s.jail}") or set [sandbox] user to a user that may write it.`;
        const serve = await htmcp(["serve", "--policy", s.policy], s.env);
        assert.equal(serve.code, 1);
        assert.ok(serve.stderr.endsWith(`htmcp: ${expected}\n`), serve.stderr);
        const check = await htmcp(["check", "--policy", s.policy], s.env);
        assert.equal(check.code, 1);
        assert.ok(check.stdout.includes(`Sandbox: FAIL: ${expected}`), check.stdout);
        // Nothing was served: the log holds no attempt.
        const log = await Deno.readTextFile(`${s.dir}/audit.jsonl`).catch(() => "");
        assert.doesNotMatch(log, /"kind":"attempt"/);
      } finally {
        await Deno.remove(s.dir, { recursive: true });
      }
    }
  },
});

const PATH_CHECK_ONLY_SANDBOX = '[sandbox]\nmode = "none"\naccept_path_check_only = true';

Deno.test({
  name: "a jail the run-as uid cannot write is reported by check with the fix, and serve refuses",
  ignore: !AS_ROOT,
  async fn() {
    for (const mode of ["bwrap", "none"] as const) {
      const sandbox = mode === "bwrap"
        ? '[sandbox]\nmode = "bwrap"\nuser = "nobody"'
        : `${PATH_CHECK_ONLY_SANDBOX}\nuser = "nobody"`;
      // Root-owned 0755: nobody may enter and read it, not write it.
      const s = await scene(sandbox, (jail) => Deno.chmod(jail, 0o755));
      try {
        const check = await htmcp(["check", "--policy", s.policy], s.env);
        assert.equal(check.code, 1, check.stdout);
        const fix =
          `commands run as uid 65534, which cannot search and write the jail root "${s.jail}" (the command's uid cannot create a file in the jail root); make the jail owned by that uid (for example "chown -R 65534: ${s.jail}") and every folder above it searchable (chmod o+x), or set [sandbox] user to the jail's owner.`;
        assert.ok(check.stdout.includes(fix), `${mode}: ${check.stdout}`);
        const serve = await htmcp(["serve", "--policy", s.policy], s.env);
        assert.equal(serve.code, 1);
        assert.ok(serve.stderr.includes(fix), serve.stderr);
        // The probe left nothing behind.
        assert.deepEqual([...Deno.readDirSync(s.jail)], []);
      } finally {
        await Deno.remove(s.dir, { recursive: true });
      }
    }
  },
});

Deno.test({
  name:
    "a jail behind a folder the run-as uid cannot search is refused by the bwrap probe with the fix",
  ignore: !AS_ROOT,
  async fn() {
    const s = await scene('[sandbox]\nmode = "bwrap"', async (jail) => {
      await prepareJail(jail);
      await Deno.chmod(jail.slice(0, jail.lastIndexOf("/")), 0o700);
    });
    try {
      const check = await htmcp(["check", "--policy", s.policy], s.env);
      assert.equal(check.code, 1, check.stdout);
      assert.match(
        check.stdout,
        /commands run as uid 65534, which cannot search and write the jail root .*every folder above it searchable \(chmod o\+x\)/,
      );
    } finally {
      await Deno.remove(s.dir, { recursive: true });
    }
  },
});

Deno.test("[sandbox] user names who commands run as, in the sandbox and outside it", async () => {
  for (const sandbox of ["bwrap", "none"] as const) {
    const h = await startHarness({
      sandbox,
      allow: ["touch"],
      extraToml: AS_ROOT ? 'user = "nobody"' : "",
    });
    try {
      await assertSandboxMode(h, sandbox);
      const made = await h.call("run_command", { command: "touch by-user" });
      assert.equal(made.code, "OK", JSON.stringify(made));
      assert.equal(made.exit_code, 0, made.stderr);
      const owner = (await Deno.stat(`${h.jail}/by-user`)).uid;
      assert.notEqual(owner, 0, "never root");
      assert.equal(owner, (await Deno.stat(h.jail)).uid);
    } finally {
      await h.close();
    }
  }
});
