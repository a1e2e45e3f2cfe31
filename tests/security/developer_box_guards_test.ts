/**
 * Attack class: a developer-box policy (the everyday tools plus git, sed,
 * awk, tar, diff3, sdiff and sort) in `[sandbox] mode = "none"`, where layer
 * 1 alone must hold. Through the real server and the real MCP client, each
 * attack is first shown to work against the raw tool, then refused by htmcp
 * with POLICY_DENIED: nothing ran (canaries inside and outside the jail
 * absent, planted files unchanged), nothing leaked, and the attempt is in
 * the audit log as a denial.
 */
import { equal, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree } from "../_helpers/jail.ts";

const ALLOW = ["ls", "cat", "echo", "touch", "git", "sed", "awk", "tar", "diff3", "sdiff", "sort"];

const IDENTITY = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};

/**
 * The raw tools run as root on folders handed to the command's uid: git
 * would stop at their ownership, which is not what the raw proofs are about.
 */
const TRUST_ALL = {
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "safe.directory",
  GIT_CONFIG_VALUE_0: "*",
};

async function raw(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ code: number; out: string; err: string }> {
  const result = await new Deno.Command(command, {
    args: [...args],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: cwd, ...IDENTITY, ...TRUST_ALL },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  const text = new TextDecoder();
  return { code: result.code, out: text.decode(result.stdout), err: text.decode(result.stderr) };
}

async function gitOk(cwd: string, ...args: string[]): Promise<void> {
  const result = await raw("git", args, cwd);
  equal(result.code, 0, `setup: git ${args.join(" ")}: ${result.err}`);
}

interface Case {
  /** The folder under the jail the case works in. */
  readonly cwd: string;
  readonly inside: string;
  readonly outside: string;
}

/**
 * A fresh folder in the jail holding a repository with one commit, and its
 * two canaries. Both canaries are where the command's uid could write them
 * (the case's folder is handed to that uid before each call; the outside one
 * is in a folder open to all), so only htmcp's refusal keeps them absent.
 */
async function makeCase(h: Harness, name: string): Promise<Case> {
  const cwd = `${h.jail}/${name}`;
  await Deno.mkdir(cwd);
  await Deno.writeTextFile(`${cwd}/f.txt`, "one\n");
  await gitOk(cwd, "init", "-q", ".");
  await gitOk(cwd, "add", "f.txt");
  await gitOk(cwd, "commit", "-qm", "one");
  const open = `${h.dir}/open-${name}`;
  await Deno.mkdir(open);
  await Deno.chmod(open, 0o777);
  return { cwd, inside: `${cwd}/canary-in`, outside: `${open}/canary-out` };
}

/** A program that creates both canaries, for every place a tool runs a program. */
async function plantProgram(c: Case): Promise<string> {
  const path = `${c.cwd}/evil.sh`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\ntouch '${c.inside}' '${c.outside}'\n[ $# -gt 0 ] && cat -- "$@" 2>/dev/null\nexit 0\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

async function canariesAbsent(c: Case, why: string): Promise<void> {
  ok(!(await exists(c.inside)), `${why}: the inside canary appeared`);
  ok(!(await exists(c.outside)), `${why}: the outside canary appeared`);
}

async function removeCanaries(c: Case): Promise<void> {
  for (const path of [c.inside, c.outside]) await Deno.remove(path).catch(() => {});
}

/** Runs `command` through htmcp and asserts the refusal, its audit record and that nothing ran. */
/** `guard`: the guard that refuses, or "git-folder" for the rule that only git works in a git folder. */
async function refused(h: Harness, c: Case, command: string, guard: string) {
  // What the setup planted as root becomes the command's uid's, as a model's
  // own files would be: git then trusts the repository, and the canaries
  // could be written.
  await chownTree(c.cwd);
  const result = await h.call("run_command", { command, cwd: c.cwd.slice(h.jail.length + 1) });
  equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
  ok(
    guard === "git-folder"
      ? /git folder ".*"; without the kernel sandbox only git itself works there/.test(
        result.policy_reason,
      )
      : result.policy_reason.includes(`guard "${guard}"`),
    result.policy_reason,
  );
  await canariesAbsent(c, command);
  const records = await h.records();
  const attempt = records.findLast((record) => record.command_raw === command);
  ok(attempt !== undefined, `no audit record for ${command}`);
  equal(attempt.verdict, "deny");
  equal(attempt.code, "POLICY_DENIED");
  return result;
}

Deno.test("a developer-box policy in mode none refuses every guarded escape through the real client", async (t) => {
  const h = await startHarness({ allow: ALLOW, sandbox: "none" });
  try {
    await t.step("the server under test runs commands unsandboxed (mode none)", async () => {
      await assertSandboxMode(h, "none");
    });

    await t.step("git push to a local repository: its pre-receive hook never runs", async () => {
      const c = await makeCase(h, "push");
      await gitOk(c.cwd, "init", "-q", "--bare", "dst.git");
      const hook = await plantProgram(c);
      await Deno.copyFile(hook, `${c.cwd}/dst.git/hooks/pre-receive`);
      await Deno.chmod(`${c.cwd}/dst.git/hooks/pre-receive`, 0o755);
      await raw("git", ["-c", "core.hooksPath=/dev/null", "push", "./dst.git", "HEAD:a"], c.cwd);
      ok(await exists(c.outside), "the raw push ran the other repository's hook despite -c");
      await removeCanaries(c);
      await refused(h, c, "git push ./dst.git HEAD:b", "git-local-transport");
      await refused(h, c, "git push dst.git HEAD:b", "git-repository");
      await gitOk(c.cwd, "remote", "add", "o", "dst.git");
      await refused(h, c, "git push o HEAD:b", "git-repository");
    });

    await t.step("a planted filter driver does not run on git add", async () => {
      const c = await makeCase(h, "filter");
      const program = await plantProgram(c);
      await gitOk(c.cwd, "config", "filter.x.clean", program);
      await Deno.writeTextFile(`${c.cwd}/.gitattributes`, "*.txt filter=x\n");
      await Deno.writeTextFile(`${c.cwd}/f.txt`, "two\n");
      await raw("git", ["-c", "core.hooksPath=/dev/null", "add", "f.txt"], c.cwd);
      ok(await exists(c.outside), "raw git ran the filter");
      await removeCanaries(c);
      await refused(h, c, "git add f.txt", "git-repository");
    });

    await t.step("a planted remote.origin.uploadpack does not run on git fetch", async () => {
      const c = await makeCase(h, "uploadpack");
      const program = await plantProgram(c);
      await gitOk(c.cwd, "remote", "add", "origin", "https://example.invalid/x.git");
      await gitOk(c.cwd, "config", "remote.origin.uploadpack", program);
      await refused(h, c, "git fetch origin", "git-repository");
    });

    await t.step("blame.ignoreRevsFile naming a host file is not read", async () => {
      const c = await makeCase(h, "blame");
      const secret = `${h.dir}/secret-blame.txt`;
      await Deno.writeTextFile(secret, "HOST-SECRET-LINE\n");
      await gitOk(c.cwd, "config", "blame.ignoreRevsFile", secret);
      const plain = await raw("git", ["blame", "f.txt"], c.cwd);
      ok(plain.err.includes("HOST-SECRET-LINE"), "raw git blame printed the host file");
      const result = await refused(h, c, "git blame f.txt", "git-repository");
      ok(!JSON.stringify(result).includes("HOST-SECRET-LINE"));
    });

    await t.step("a gitfile and object alternates pointing outside are refused", async () => {
      const c = await makeCase(h, "gitfile");
      const host = `${h.dir}/host-repo`;
      await gitOk(h.dir, "init", "-q", host);
      await Deno.mkdir(`${c.cwd}/w`);
      await Deno.writeTextFile(`${c.cwd}/w/.git`, `gitdir: ${host}/.git\n`);
      const result = await h.call("run_command", { command: "git status", cwd: "gitfile/w" });
      equal(result.code, "POLICY_DENIED");
      ok(result.policy_reason.includes('guard "git-repository"'), result.policy_reason);
      await Deno.writeTextFile(`${c.cwd}/.git/objects/info/alternates`, `${host}/.git/objects\n`);
      await refused(h, c, "git log --oneline", "git-repository");
    });

    await t.step(
      "sparse-checkout, update-index --cacheinfo and --work-tree=.git cannot write .git",
      async () => {
        const c = await makeCase(h, "writes");
        const config = await Deno.readTextFile(`${c.cwd}/.git/config`);
        await refused(
          h,
          c,
          "git sparse-checkout set --no-cone '[core]' 'fsmonitor = x'",
          "git-subcommand",
        );
        await refused(
          h,
          c,
          "git update-index --add --cacheinfo 100755,0123456789012345678901234567890123456789,hooks/pre-commit",
          "git-index-info",
        );
        await refused(h, c, "git checkout-index -a -f --prefix=.gi", "git-subcommand");
        // Without the sandbox, the git-folder rule refuses it first: "HEAD" names .git/HEAD
        // from the work tree it gives (the repository check would refuse it next).
        await refused(h, c, "git --work-tree=.git checkout HEAD -- f.txt", "git-folder");
        equal(await Deno.readTextFile(`${c.cwd}/.git/config`), config, ".git/config is unchanged");
        ok(!(await exists(`${c.cwd}/.git/f.txt`)), "nothing was checked out into .git");
        ok(!(await exists(`${c.cwd}/.git/info/sparse-checkout`)));
      },
    );

    await t.step(
      "GNU sed label and v arguments end at a blank: the e command after them never runs",
      async () => {
        const c = await makeCase(h, "sed");
        const script = `:a e touch ${c.inside} ${c.outside}`;
        await raw("sed", ["-n", script, "f.txt"], c.cwd);
        ok(await exists(c.outside), "raw sed ran the command after the label");
        await removeCanaries(c);
        await refused(h, c, `sed -n '${script}' f.txt`, "sed-commands");
        await refused(h, c, `sed -n 'v 4.2 e touch ${c.inside}' f.txt`, "sed-commands");
        await refused(h, c, `sed -n -e ':x' -e 't x e touch ${c.inside}' f.txt`, "sed-commands");
      },
    );

    await t.step("awk cannot read a host file named through ARGV in octal", async () => {
      const c = await makeCase(h, "awk");
      const secret = `${h.dir}/secret-awk.txt`;
      await Deno.writeTextFile(secret, "HOST-AWK-SECRET\n");
      const octal = [...secret].map((ch) => `\\${ch.charCodeAt(0).toString(8).padStart(3, "0")}`)
        .join("");
      const program = `BEGIN{ARGV[1]="${octal}";ARGC=2} {print}`;
      const plain = await raw("awk", [program, "f.txt"], c.cwd);
      equal(plain.out, "HOST-AWK-SECRET\n", "raw awk read the host file");
      const result = await refused(h, c, `awk '${program}' f.txt`, "awk-commands");
      ok(!JSON.stringify(result).includes("HOST-AWK-SECRET"));
      await refused(h, c, `awk 'BEGIN{print ENVIRON["HOME"]}'`, "awk-commands");
    });

    await t.step("diff3 and sdiff --diff-program never run the program", async () => {
      const c = await makeCase(h, "diff");
      await plantProgram(c);
      await raw("diff3", ["--diff-program=./evil.sh", "f.txt", "f.txt", "f.txt"], c.cwd);
      ok(await exists(c.outside), "raw diff3 ran the program");
      await removeCanaries(c);
      await refused(h, c, "diff3 --diff-program=./evil.sh f.txt f.txt f.txt", "diff-program");
      await refused(h, c, "sdiff --diff-program ./evil.sh f.txt f.txt", "diff-program");
    });

    await t.step("sort --files0-from and tar remote archives are refused", async () => {
      const c = await makeCase(h, "lists");
      const secret = `${h.dir}/secret-sort.txt`;
      await Deno.writeTextFile(secret, "HOST-SORT-SECRET\n");
      await Deno.writeTextFile(`${c.cwd}/list`, `${secret}\0`);
      const plain = await raw("sort", ["--files0-from=list"], c.cwd);
      equal(plain.out, "HOST-SORT-SECRET\n", "raw sort read the host file named in the list");
      const result = await refused(h, c, "sort --files0-from=list", "files0-from");
      ok(!JSON.stringify(result).includes("HOST-SORT-SECRET"));
      await refused(h, c, "tar -tf 127.0.0.1:a.tar", "tar-remote-archive");
      await refused(h, c, "tar -cf a.tar -T list", "tar-files-from");
    });

    await t.step(
      "the audit records the argv that runs, git's safety options included",
      async () => {
        await makeCase(h, "audit");
        const result = await h.call("run_command", { command: "git status --short", cwd: "audit" });
        equal(result.code, "OK", JSON.stringify(result));
        const records = await h.records();
        const attempt = records.findLast((record) =>
          record.command_raw === "git status --short" && record.verdict === "allow"
        );
        ok(attempt !== undefined);
        const argv = attempt.argv as string[];
        equal(argv[0], "git");
        ok(
          argv.includes("--no-pager") && argv.includes("core.hooksPath=/dev/null"),
          argv.join(" "),
        );
        equal(argv.slice(-2).join(" "), "status --short");
      },
    );

    await t.step("an awk program and a sed script are not path-checked: /re/ is text", async () => {
      const awk = await h.call("run_command", {
        command: "awk '/one/{print}' f.txt",
        cwd: "lists",
      });
      equal(awk.code, "OK", JSON.stringify(awk));
      equal(awk.stdout, "one\n");
      const sed = await h.call("run_command", { command: "sed -n '/one/p' f.txt", cwd: "lists" });
      equal(sed.code, "OK", JSON.stringify(sed));
      equal(sed.stdout, "one\n");
      const escape = await h.call("run_command", { command: "awk '{print}' /etc/passwd" });
      equal(escape.code, "PATH_ESCAPE", "the files after the program are still checked");
    });
  } finally {
    await h.close();
  }
});

Deno.test("with the git guards switched off, git itself still refuses the local transport the run specification forbids", async () => {
  const h = await startHarness({
    allow: ALLOW,
    extraToml: '[guards]\ndisable = ["git-local-transport", "git-repository"]\n',
    sandbox: "none",
  });
  try {
    await assertSandboxMode(h, "none");
    const c = await makeCase(h, "envlayer");
    await gitOk(c.cwd, "init", "-q", "--bare", "dst.git");
    const hook = await plantProgram(c);
    await Deno.copyFile(hook, `${c.cwd}/dst.git/hooks/pre-receive`);
    await Deno.chmod(`${c.cwd}/dst.git/hooks/pre-receive`, 0o755);
    // Commands run as the jail's owner, never root: the repositories are theirs.
    await chownTree(c.cwd);
    const result = await h.call("run_command", {
      command: "git push ./dst.git HEAD:refs/heads/x",
      cwd: "envlayer",
    });
    equal(result.code, "OK", JSON.stringify(result));
    ok(result.exit_code !== 0, "git refused the push");
    ok(result.stderr.includes("transport 'file' not allowed"), result.stderr);
    await canariesAbsent(c, "the other repository's hook");
  } finally {
    await h.close();
  }
});
