/**
 * A repository in the jail is untrusted: its `.git/config` and hooks name
 * programs git would run. Each test plants one such program (a script that
 * creates a canary), shows that plain git runs it, then runs the same
 * command the way the executor does (`commandHardening` args and env, argv
 * from `evaluateCommand`) and asserts the canary never appears.
 */
import { exists } from "../_helpers/exists.ts";
import { deepEqual, equal, ok } from "node:assert/strict";
import { commandHardening, evaluateCommand, gitSafetyArgs } from "../../src/policy/mod.ts";
import { DEFAULT_CHILD_PATH, type Policy } from "../../src/config/types.ts";
import { makePolicy } from "../_helpers/policy.ts";

interface Repo {
  readonly dir: string;
  readonly policy: Policy;
  readonly canary: string;
  readonly evil: string;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};

async function run(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Deno.CommandOutput> {
  return await new Deno.Command("/usr/bin/git", {
    args: [...args],
    cwd,
    clearEnv: true,
    env: { PATH: DEFAULT_CHILD_PATH, HOME: cwd, ...IDENTITY, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
}

async function makeRepo(): Promise<Repo> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-git-" });
  const canary = `${dir}/canary`;
  const evil = `${dir}/evil.sh`;
  // Creates the canary, then behaves enough like cat (textconv) to let git finish
  // without ever waiting on stdin (ssh, proxy).
  await Deno.writeTextFile(
    evil,
    `#!/bin/sh\ntouch '${canary}'\n[ $# -gt 0 ] && cat -- "$@" 2>/dev/null\nexit 0\n`,
  );
  await Deno.chmod(evil, 0o755);
  ok((await run(dir, ["init", "-q", "."])).success);
  await Deno.writeTextFile(`${dir}/f.txt`, "one\n");
  ok((await run(dir, ["add", "f.txt"])).success);
  ok((await run(dir, ["commit", "-qm", "one"])).success);
  await Deno.writeTextFile(`${dir}/f.txt`, "two\n");
  return { dir, policy: makePolicy({ jailRoot: dir }), canary, evil };
}

/** Runs `raw` as the executor would: policy argv, hardening args first, hardening env on top. */
async function runHardened(repo: Repo, raw: string): Promise<Deno.CommandOutput> {
  const decision = evaluateCommand(raw, repo.policy);
  ok(decision.ok, JSON.stringify(decision));
  const hardening = commandHardening(decision.command);
  return await run(repo.dir, [...hardening.prependArgs, ...decision.argv.slice(1)], hardening.env);
}

async function plantedConfigCase(
  configure: (repo: Repo) => Promise<void>,
  raw: string,
): Promise<void> {
  const repo = await makeRepo();
  try {
    await configure(repo);
    const plain = await run(repo.dir, raw.split(" ").slice(1));
    ok(await exists(repo.canary), `plain git ran the planted program: ${raw} (${plain.code})`);
    await Deno.remove(repo.canary);
    await runHardened(repo, raw);
    ok(!(await exists(repo.canary)), `hardened git ran the planted program: ${raw}`);
  } finally {
    await Deno.remove(repo.dir, { recursive: true });
  }
}

async function setConfig(repo: Repo, key: string, value: string): Promise<void> {
  ok((await run(repo.dir, ["config", key, value])).success);
}

Deno.test("git hardening stops a planted core.fsmonitor program on git status", async () => {
  await plantedConfigCase((repo) => setConfig(repo, "core.fsmonitor", repo.evil), "git status");
});

Deno.test("git hardening stops planted hooks (pre-commit, post-commit) on git commit", async () => {
  await plantedConfigCase(async (repo) => {
    for (const hook of ["pre-commit", "post-commit"]) {
      await Deno.copyFile(repo.evil, `${repo.dir}/.git/hooks/${hook}`);
      await Deno.chmod(`${repo.dir}/.git/hooks/${hook}`, 0o755);
    }
  }, "git commit -qam two");
});

Deno.test("git hardening stops a planted diff.external on git diff", async () => {
  await plantedConfigCase((repo) => setConfig(repo, "diff.external", repo.evil), "git diff");
});

Deno.test("git hardening stops a planted textconv driver on git diff", async () => {
  await plantedConfigCase(async (repo) => {
    await setConfig(repo, "diff.evil.textconv", repo.evil);
    await Deno.writeTextFile(`${repo.dir}/.gitattributes`, "*.txt diff=evil\n");
  }, "git diff");
});

Deno.test("git hardening stops a planted textconv driver on git log -p", async () => {
  await plantedConfigCase(async (repo) => {
    await setConfig(repo, "diff.evil.textconv", repo.evil);
    await Deno.writeTextFile(`${repo.dir}/.git/info/attributes`, "*.txt diff=evil\n");
    ok((await run(repo.dir, ["commit", "-qam", "two"])).success);
  }, "git log -p");
});

async function plantTextconv(repo: Repo): Promise<void> {
  await setConfig(repo, "diff.evil.textconv", repo.evil);
  await Deno.writeTextFile(`${repo.dir}/.git/info/attributes`, "*.txt diff=evil\n");
  ok((await run(repo.dir, ["commit", "-qam", "two"])).success);
  await Deno.writeTextFile(`${repo.dir}/f.txt`, "three\n");
  ok((await run(repo.dir, ["stash", "-q"])).success);
}

for (
  const raw of [
    "git show",
    "git log -G two",
    "git reflog -p",
    "git stash list -p",
  ]
) {
  Deno.test(`git hardening stops a planted textconv driver on ${raw}`, async () => {
    await plantedConfigCase(plantTextconv, raw);
  });
}

for (const raw of ["git status -vv", "git commit -v -a"]) {
  Deno.test(`evaluateCommand() refuses ${raw}, whose diff runs textconv and takes no --no-textconv`, async () => {
    const repo = await makeRepo();
    try {
      await plantTextconv(repo);
      await Deno.writeTextFile(`${repo.dir}/f.txt`, "four\n");
      await run(repo.dir, raw.split(" ").slice(1));
      ok(await exists(repo.canary), "plain git runs the driver here");
      await Deno.remove(repo.canary);
      const decision = evaluateCommand(raw, repo.policy);
      ok(!decision.ok);
      equal(decision.code, "POLICY_DENIED");
      ok(decision.reason.includes('guard "git-verbose-diff"'), decision.reason);
    } finally {
      await Deno.remove(repo.dir, { recursive: true });
    }
  });
}

Deno.test("guard git-help stops a planted man.viewer that hardening alone would not", async () => {
  const repo = await makeRepo();
  try {
    await setConfig(repo, "man.viewer", "evil");
    await setConfig(repo, "man.evil.cmd", repo.evil);
    const raw = "git status --help";
    const decision = evaluateCommand(raw, repo.policy);
    ok(!decision.ok);
    ok(decision.reason.includes('guard "git-help"'), decision.reason);
    const relaxed = Object.freeze({ ...repo.policy, disabledGuards: new Set(["git-help"]) });
    const allowed = evaluateCommand(raw, relaxed);
    ok(allowed.ok);
    const hardening = commandHardening(allowed.command);
    await run(repo.dir, [...hardening.prependArgs, ...allowed.argv.slice(1)], hardening.env);
    ok(await exists(repo.canary), "without the guard the configured viewer runs");
  } finally {
    await Deno.remove(repo.dir, { recursive: true });
  }
});

Deno.test("git hardening stops a planted core.editor on git commit without -m", async () => {
  await plantedConfigCase((repo) => setConfig(repo, "core.editor", repo.evil), "git commit -a");
});

Deno.test("git hardening stops a planted core.sshCommand on an ssh URL", async () => {
  await plantedConfigCase(
    (repo) => setConfig(repo, "core.sshCommand", repo.evil),
    "git ls-remote ssh://127.0.0.1:1/x",
  );
});

Deno.test("git hardening stops a planted core.gitProxy on a git:// URL", async () => {
  await plantedConfigCase(
    (repo) => setConfig(repo, "core.gitProxy", repo.evil),
    "git ls-remote git://127.0.0.1:1/x",
  );
});

Deno.test("git hardening refuses to discover an embedded bare repository", async () => {
  const repo = await makeRepo();
  try {
    const bare = `${repo.dir}/inner.git`;
    ok((await run(repo.dir, ["init", "-q", "--bare", bare])).success);
    const plain = await run(bare, ["rev-parse", "--git-dir"]);
    ok(plain.success, "plain git uses the bare repository found by discovery");
    const policy = makePolicy({ jailRoot: bare });
    const decision = evaluateCommand("git rev-parse --git-dir", policy);
    ok(decision.ok);
    const hardening = commandHardening(decision.command);
    const hardened = await run(
      bare,
      [...hardening.prependArgs, ...decision.argv.slice(1)],
      hardening.env,
    );
    ok(!hardened.success, "hardened git does not read an implicitly found bare repository");
  } finally {
    await Deno.remove(repo.dir, { recursive: true });
  }
});

Deno.test("git hardening keeps ordinary git working (status, diff, log)", async () => {
  const repo = await makeRepo();
  try {
    const status = await runHardened(repo, "git status --short");
    ok(status.success);
    ok(new TextDecoder().decode(status.stdout).includes(" M f.txt"));
    const diff = await runHardened(repo, "git diff");
    ok(new TextDecoder().decode(diff.stdout).includes("+two"));
    const log = await runHardened(repo, "git log --oneline");
    ok(new TextDecoder().decode(log.stdout).includes("one"));
  } finally {
    await Deno.remove(repo.dir, { recursive: true });
  }
});

Deno.test("commandHardening() returns nothing extra for a command that is not git", () => {
  const policy = makePolicy({ jailRoot: Deno.cwd() });
  const ls = policy.allowlist.get("ls");
  ok(ls !== undefined);
  deepEqual(commandHardening(ls), { prependArgs: [], env: {} });
});

Deno.test("gitSafetyArgs() overrides the documented code-running keys and disables the pager", () => {
  const args = gitSafetyArgs();
  equal(args[0], "--no-pager");
  for (
    const setting of [
      "core.fsmonitor=false",
      "core.hooksPath=/dev/null",
      "core.pager=cat",
      "core.editor=:",
      "core.sshCommand=ssh",
      "credential.helper=",
      "protocol.ext.allow=never",
      "safe.bareRepository=explicit",
      "rerere.enabled=false",
      "rebase.instructionFormat=%s",
      "submodule.recurse=false",
    ]
  ) {
    const at = args.indexOf(setting);
    ok(at > 0 && args[at - 1] === "-c", setting);
  }
  const git = makePolicy({ jailRoot: Deno.cwd() }).allowlist.get("git");
  ok(git !== undefined);
  const env = commandHardening(git).env;
  equal(env.GIT_CONFIG_NOSYSTEM, "1");
  equal(env.GIT_CONFIG_GLOBAL, "/dev/null");
  equal(env.GIT_TERMINAL_PROMPT, "0");
});

Deno.test("git hardening keeps the other repository's hooks from running on a local push (GIT_ALLOW_PROTOCOL)", async () => {
  await plantedConfigCase(async (repo) => {
    const dst = `${repo.dir}/dst.git`;
    ok((await run(repo.dir, ["init", "-q", "--bare", dst])).success);
    await Deno.copyFile(repo.evil, `${dst}/hooks/pre-receive`);
    await Deno.chmod(`${dst}/hooks/pre-receive`, 0o755);
    // A remote name, so that only the configuration says the transport is local.
    await setConfig(repo, "remote.o.url", "dst.git");
  }, "git push o HEAD:refs/heads/x");
});

Deno.test("git hardening refuses the file transport even when the repository allows it", async () => {
  const repo = await makeRepo();
  try {
    ok((await run(repo.dir, ["init", "-q", "--bare", `${repo.dir}/dst.git`])).success);
    await setConfig(repo, "protocol.file.allow", "always");
    await setConfig(repo, "remote.o.url", "dst.git");
    const hardened = await runHardened(repo, "git push o HEAD:refs/heads/x");
    ok(!hardened.success);
    ok(new TextDecoder().decode(hardened.stderr).includes("transport 'file' not allowed"));
  } finally {
    await Deno.remove(repo.dir, { recursive: true });
  }
});

Deno.test("evaluateCommand() returns the complete run specification for git: every safety option is in it", () => {
  const jail = Deno.makeTempDirSync({ prefix: "htmcp-spec-" });
  try {
    const policy = makePolicy({ jailRoot: jail });
    const decision = evaluateCommand("git diff HEAD", policy);
    ok(decision.ok);
    equal(decision.run.path, decision.command.path);
    deepEqual(decision.run.args, [
      ...gitSafetyArgs(),
      "diff",
      "--no-ext-diff",
      "--no-textconv",
      "HEAD",
    ]);
    equal(
      decision.run.env.GIT_ALLOW_PROTOCOL,
      "http:https:git",
      "no ssh: the policy does not allow it",
    );
    // Not the host user's ignore, attributes or config files under HOME.
    equal(decision.run.env.XDG_CONFIG_HOME, "/nonexistent/htmcp-no-user-config");
    equal(
      decision.run.env.GIT_CEILING_DIRECTORIES,
      policy.jailRoot.slice(0, policy.jailRoot.lastIndexOf("/")),
    );
    const ls = evaluateCommand("ls -la", policy);
    ok(ls.ok);
    deepEqual(ls.run.args, ["-la"]);
    deepEqual(ls.run.env, {});
  } finally {
    Deno.removeSync(jail, { recursive: true });
  }
});
