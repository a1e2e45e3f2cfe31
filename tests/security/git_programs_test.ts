/**
 * Attack class: git starting a program the policy never named, from a
 * repository's saved state or from a merge strategy or signing option,
 * where the argument guards see nothing: a rebase todo list with an `exec`
 * line written into `.git/rebase-merge/` (then `git rebase --continue`
 * runs it with `sh`), `-s resolve` (a shell script), and signing (gpg).
 * Through the real server and client, in both sandbox modes: in bwrap mode
 * the sandbox keeps such a program off the host, but it would still run a
 * program the policy does not allow. Each attack is first shown against the
 * raw tool; htmcp refuses it (POLICY_DENIED, nothing ran: canaries inside
 * and outside the jail absent, the attempt audited) or, for signing, lets
 * git run and fail with no signing program started.
 */
import { equal, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree } from "../_helpers/jail.ts";
import { NO_SIGNING_PROGRAM } from "../../src/policy/git_safety.ts";

const ALLOW = ["ls", "cat", "echo", "touch", "mkdir", "git"];

const IDENTITY = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};

async function raw(args: readonly string[], cwd: string, env: Record<string, string> = {}) {
  const result = await new Deno.Command("git", {
    // Root here, on repositories handed to the jail's owner.
    args: ["-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*", ...args],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: cwd, ...IDENTITY, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  const text = new TextDecoder();
  return { code: result.code, out: text.decode(result.stdout), err: text.decode(result.stderr) };
}

async function gitOk(cwd: string, ...args: string[]): Promise<void> {
  const result = await raw(args, cwd);
  equal(result.code, 0, `setup: git ${args.join(" ")}: ${result.err}`);
}

/** A repository with one commit on `main` and the identity in its own config, in `<jail>/<name>`. */
async function makeRepository(h: Harness, name: string): Promise<string> {
  const cwd = `${h.jail}/${name}`;
  await Deno.mkdir(cwd);
  await Deno.writeTextFile(`${cwd}/f.txt`, "one\n");
  await gitOk(cwd, "init", "-q", "-b", "main", ".");
  await gitOk(cwd, "config", "user.name", "t");
  await gitOk(cwd, "config", "user.email", "t@example.invalid");
  await gitOk(cwd, "add", "f.txt");
  await gitOk(cwd, "commit", "-qm", "one");
  // Commands run as the jail's owner: the repository is theirs, as one they made would be.
  await chownTree(cwd);
  return cwd;
}

/** One branch off main per name, each adding a file of its name; back on main after. */
async function branchesOffMain(cwd: string, names: readonly string[]): Promise<void> {
  for (const branch of names) {
    await gitOk(cwd, "checkout", "-q", "-b", branch, "main");
    await Deno.writeTextFile(`${cwd}/${branch}.txt`, `${branch}\n`);
    await gitOk(cwd, "add", `${branch}.txt`);
    await gitOk(cwd, "commit", "-qm", branch);
  }
  await gitOk(cwd, "checkout", "-q", "main");
}

/** Plants what `git rebase --continue` reads: a rebase in progress whose todo runs `line`. */
async function plantRebase(cwd: string, line: string): Promise<void> {
  const head = (await raw(["rev-parse", "HEAD"], cwd)).out.trim();
  const state = `${cwd}/.git/rebase-merge`;
  await Deno.mkdir(state);
  await Deno.writeTextFile(`${state}/head-name`, "refs/heads/main\n");
  await Deno.writeTextFile(`${state}/onto`, `${head}\n`);
  await Deno.writeTextFile(`${state}/orig-head`, `${head}\n`);
  await Deno.writeTextFile(`${state}/interactive`, "");
  await Deno.writeTextFile(`${state}/git-rebase-todo`, `${line}\n`);
  await chownTree(state);
}

/** Runs `command` in `<jail>/<folder>` through htmcp and asserts it ran and exited 0. */
async function ranClean(h: Harness, command: string, folder: string) {
  const result = await h.call("run_command", { command, cwd: folder });
  equal(result.code, "OK", result.policy_reason);
  equal(result.exit_code, 0, result.stderr);
  return result;
}

async function refused(h: Harness, cwd: string, command: string, canaries: readonly string[]) {
  await chownTree(cwd);
  const result = await h.call("run_command", { command, cwd: cwd.slice(h.jail.length + 1) });
  equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
  equal(result.exit_code, null, "nothing ran");
  ok(result.policy_reason.includes('guard "git-repository"'), result.policy_reason);
  for (const canary of canaries) ok(!(await exists(canary)), `${command}: ${canary} appeared`);
  const attempt = (await h.records()).findLast((record) => record.command_raw === command);
  ok(attempt !== undefined, `no audit record for ${command}`);
  equal(attempt.verdict, "deny");
  equal(attempt.code, "POLICY_DENIED");
  return result;
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: git starts no program from a planted rebase todo, a strategy or signing`, async (t) => {
    const h = await startHarness({ allow: ALLOW, sandbox: mode });
    try {
      await t.step(`the server under test runs commands in mode ${mode}`, async () => {
        await assertSandboxMode(h, mode);
      });

      await t.step(
        "an exec line planted in a rebase's todo list: --continue is refused",
        async () => {
          const cwd = await makeRepository(h, "rebase");
          const inside = `${cwd}/canary-in`;
          const outside = `${h.dir}/canary-out-rebase`;
          const exec = `exec touch ${inside} ${outside}`;
          await plantRebase(cwd, exec);
          // The raw tool runs it: git hands the line to the shell.
          const ran = await raw(["rebase", "--continue"], cwd);
          ok(ran.err.includes("Executing: touch"), ran.err);
          ok(await exists(outside), "raw git rebase --continue ran the planted exec line");
          await Deno.remove(inside);
          await Deno.remove(outside);
          await plantRebase(cwd, exec);
          const result = await refused(h, cwd, "git rebase --continue", [inside, outside]);
          ok(result.policy_reason.includes("runs a shell command"), result.policy_reason);
          // Its abbreviation, after blanks, in the middle of the list.
          await Deno.writeTextFile(
            `${cwd}/.git/rebase-merge/git-rebase-todo`,
            `break\n  \tx touch ${inside} ${outside}\n`,
          );
          await refused(h, cwd, "git rebase --continue", [inside, outside]);
          // What the refusal says to do still works, and ends the rebase.
          await chownTree(cwd);
          await ranClean(h, "git rebase --abort", "rebase");
          ok(!(await exists(`${cwd}/.git/rebase-merge`)));
        },
      );

      await t.step(
        "a merge strategy git runs as a shell script is refused: -s resolve, --strategy=octopus",
        async () => {
          const cwd = await makeRepository(h, "strategy");
          const execPath = (await raw(["--exec-path"], cwd)).out.trim();
          const script = await Deno.readTextFile(`${execPath}/git-merge-resolve`);
          ok(script.startsWith("#!/bin/sh"), "git-merge-resolve is a shell script");
          await gitOk(cwd, "branch", "other");
          await chownTree(cwd);
          for (
            const command of ["git merge -s resolve other", "git merge --strategy=octopus other"]
          ) {
            await refused(h, cwd, command, []);
          }
          // The built-in strategies run in git's own process: allowed.
          await chownTree(cwd);
          await ranClean(h, "git merge -s ort other", "strategy");
        },
      );

      await t.step(
        "a merge of several heads runs no octopus script, and branch mergeoptions naming one is refused",
        async () => {
          const cwd = await makeRepository(h, "octopus");
          await branchesOffMain(cwd, ["b1", "b2"]);
          // The raw tool runs git-merge-octopus, whose shell prints these lines.
          const ran = await raw(["merge", "--no-edit", "b1", "b2"], cwd);
          ok(ran.out.includes("Trying simple merge with b2"), ran.out + ran.err);
          await gitOk(cwd, "reset", "-q", "--hard", "HEAD~0");
          await gitOk(cwd, "reset", "-q", "--hard", "b1~1");
          await chownTree(cwd);
          const merged = await h.call("run_command", {
            command: "git merge --no-edit b1 b2",
            cwd: "octopus",
          });
          equal(merged.code, "OK", merged.policy_reason);
          ok(merged.exit_code !== 0, "the octopus merge was made");
          ok(merged.stderr.includes("Merge with strategy ort failed"), merged.stderr);
          ok(!merged.stdout.includes("Trying simple merge"), merged.stdout);
          await gitOk(cwd, "config", "branch.main.mergeoptions", "--no-ff -s resolve");
          const refused_ = await refused(h, cwd, "git merge --no-edit b1", []);
          ok(refused_.policy_reason.includes("mergeoptions"), refused_.policy_reason);
          await gitOk(cwd, "config", "--unset", "branch.main.mergeoptions");
        },
      );

      await t.step(
        "no rebase runs an octopus merge: rebase -r is guarded, a planted merge line of several parents refused",
        async () => {
          const cwd = await makeRepository(h, "octorebase");
          // Three branches: a merge of three heads is an octopus.
          await branchesOffMain(cwd, ["x", "y", "z"]);
          await Deno.writeTextFile(`${cwd}/f.txt`, "two\n");
          await gitOk(cwd, "commit", "-qam", "two on main");
          const octo = (await raw(
            ["commit-tree", "-p", "x", "-p", "y", "-p", "z", "-m", "octo", "z^{tree}"],
            cwd,
          ))
            .out.trim();
          await gitOk(cwd, "checkout", "-q", "-b", "o", octo);
          // The raw tool runs git-merge-octopus, whose shell prints these lines.
          const ran = await raw(["rebase", "-r", "--onto", "main", "main~1"], cwd);
          ok(ran.out.includes("Trying simple merge with"), ran.out + ran.err);
          await gitOk(cwd, "reset", "-q", "--hard", octo);
          for (
            const command of ["git rebase -r --onto main main~1", "git rebase --rebase-merges main"]
          ) {
            await chownTree(cwd);
            const result = await h.call("run_command", { command, cwd: "octorebase" });
            equal(result.code, "POLICY_DENIED", result.policy_reason);
            ok(result.policy_reason.includes('guard "git-rebase-merges"'), result.policy_reason);
          }
          await plantRebase(cwd, "merge -C HEAD x y");
          const planted = await refused(h, cwd, "git rebase --continue", []);
          ok(planted.policy_reason.includes("octopus"), planted.policy_reason);
          await gitOk(cwd, "config", "pull.rebase", "merges");
          await Deno.remove(`${cwd}/.git/rebase-merge`, { recursive: true });
          const byConfig = await refused(h, cwd, "git status", []);
          ok(byConfig.policy_reason.includes("pull.rebase"), byConfig.policy_reason);
        },
      );

      await t.step("git bisect, a shell script in git 2.39, is refused whole", async () => {
        await makeRepository(h, "bisect");
        const result = await h.call("run_command", { command: "git bisect start", cwd: "bisect" });
        equal(result.code, "POLICY_DENIED", result.policy_reason);
        equal(result.exit_code, null);
        ok(result.policy_reason.includes('guard "git-subcommand"'), result.policy_reason);
      });

      await t.step("signing starts no gpg: git reports it cannot run the program", async () => {
        const cwd = await makeRepository(h, "signing");
        // The raw tool starts the signing program for -S (here one that leaves a canary).
        const signer = `${h.dir}/signer.sh`;
        const signed = `${h.dir}/canary-signer`;
        await Deno.writeTextFile(signer, `#!/bin/sh\ntouch ${signed}\nexit 1\n`);
        await Deno.chmod(signer, 0o755);
        await raw(
          ["-c", `gpg.program=${signer}`, "commit", "--allow-empty", "-S", "-m", "two"],
          cwd,
        );
        ok(await exists(signed), "raw git commit -S did not start the signing program");
        await gitOk(cwd, "config", "commit.gpgSign", "true");
        await chownTree(cwd);
        for (
          const command of ["git commit --allow-empty -S -m two", "git commit --allow-empty -m two"]
        ) {
          const result = await h.call("run_command", { command, cwd: "signing" });
          equal(result.code, "OK", result.policy_reason);
          ok(result.exit_code !== 0, `${command} signed: ${result.stderr}`);
          ok(result.stderr.includes(`cannot run ${NO_SIGNING_PROGRAM}`), result.stderr);
          ok(!/^gpg: /m.test(result.stderr), `gpg started: ${result.stderr}`);
          ok(!(await exists(`${h.dir}/.gnupg`)), "gpg made its folder in HOME");
        }
        equal(
          (await raw(["rev-list", "--count", "HEAD"], cwd)).out.trim(),
          "1",
          "nothing was committed",
        );
      });
    } finally {
      await h.close();
    }
  });
}

Deno.test("git starts no ssh for an ssh:// address unless the policy allowlists ssh", async () => {
  const h = await startHarness({ allow: ALLOW, sandbox: "none" });
  try {
    await assertSandboxMode(h, "none");
    const cwd = await makeRepository(h, "ssh");
    // The raw tool starts ssh, whose own message says so.
    const ran = await raw(["ls-remote", "ssh://127.0.0.1:1/x"], cwd);
    ok(/^ssh: /m.test(ran.err), `raw git ls-remote did not start ssh: ${ran.err}`);
    const result = await h.call("run_command", {
      command: "git ls-remote ssh://127.0.0.1:1/x",
      cwd: "ssh",
    });
    equal(result.code, "OK", result.policy_reason);
    ok(result.exit_code !== 0);
    ok(result.stderr.includes("transport 'ssh' not allowed"), result.stderr);
    ok(!/^ssh: /m.test(result.stderr), `ssh started: ${result.stderr}`);
  } finally {
    await h.close();
  }
});
