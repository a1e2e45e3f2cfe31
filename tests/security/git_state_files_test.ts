/**
 * Attack class (mode none): git's own files, written by other commands.
 * git reads paths and options from the files of its git folder and acts on
 * them unchecked: `MERGE_RR` names files rerere copies into `rr-cache`,
 * `worktrees/<id>/gitdir` names a folder `git worktree repair` writes a
 * gitfile into (and `move`/`remove` move or delete), `rebase-apply/apply-opt`
 * holds `git apply` options, the index names the files checkout writes.
 * The red team built each with `tr`, `echo` and `cp` and read or wrote host
 * files through git. Without the kernel sandbox, htmcp now lets no command
 * but git work inside a git folder (POLICY_DENIED): not as its working
 * folder, a path argument or a redirection, nor through a link, nor by
 * building a git folder under another name. Each attack's git half is first
 * shown against the raw tool. Under bwrap the same files are allowed and
 * what git reads through them is only the jail.
 */
import { equal, match, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree } from "../_helpers/jail.ts";
import { gitDiffSafetyArgs, gitSafetyArgs, gitSafetyEnv } from "../../src/policy/git_safety.ts";

const ALLOW = ["ls", "cat", "echo", "touch", "mkdir", "cp", "tr", "git", "xxd", "shuf", "sort"];
const RERERE_ID = "0123456789abcdef0123456789abcdef01234567";
const SECRET = "TOP-SECRET-HOST-FILE";

async function raw(args: readonly string[], cwd: string) {
  const result = await new Deno.Command("git", {
    args: ["-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*", ...args],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: cwd },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  const text = new TextDecoder();
  return { code: result.code, out: text.decode(result.stdout), err: text.decode(result.stderr) };
}

/**
 * Raw git with htmcp's hardening (the `-c` overrides, the inserted options,
 * the environment), as the executor runs it: the second line, shown on its
 * own against real git where the repository check refuses first.
 */
async function hardened(args: readonly string[], cwd: string) {
  const result = await new Deno.Command("git", {
    args: ["-c", "safe.directory=*", ...gitSafetyArgs(), ...gitDiffSafetyArgs(args)],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: cwd, ...gitSafetyEnv() },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  return { code: result.code, err: new TextDecoder().decode(result.stderr) };
}

/**
 * Asserts `command` in `<jail>/<cwd>` is refused by the repository check
 * because a nested repository's configuration names a program, before
 * anything ran (no exit code, no canary), and is audited as denied.
 */
async function refusedForNested(h: Harness, command: string, cwd: string, canary: string) {
  const result = await h.call("run_command", { command, cwd });
  equal(result.code, "POLICY_DENIED", JSON.stringify(result));
  equal(result.exit_code, null, "nothing ran");
  match(result.policy_reason, /guard "git-repository"/);
  match(result.policy_reason, /names a program git would run/);
  ok(!(await exists(canary)), `${command}: the nested repository's program ran`);
  const attempt = (await h.records()).findLast((r) => r.command_raw === command);
  equal(attempt?.code, "POLICY_DENIED");
  equal(attempt?.verdict, "deny");
}

async function gitOk(cwd: string, ...args: string[]): Promise<void> {
  const result = await raw(args, cwd);
  equal(result.code, 0, `setup: git ${args.join(" ")}: ${result.err}`);
}

/** Runs `prove` (the raw tool, no htmcp) in a fresh folder, removed after. */
async function rawProof(prefix: string, prove: (base: string) => Promise<void>): Promise<void> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  try {
    await prove(base);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

/**
 * Runs `body` against the real server in `mode`, asserted first as a step
 * (a security test proves the mode it claims), and closes the server after.
 */
async function inMode(
  t: Deno.TestContext,
  mode: "none" | "bwrap",
  body: (h: Harness) => Promise<void>,
): Promise<void> {
  const h = await startHarness({ allow: ALLOW, sandbox: mode });
  try {
    await t.step(`the server under test runs commands in mode ${mode}`, async () => {
      await assertSandboxMode(h, mode);
    });
    await body(h);
  } finally {
    await h.close();
  }
}

/** A repository with one commit on `main` in `<base>/<name>`, handed to the jail's owner. */
async function makeRepository(base: string, name: string): Promise<string> {
  const cwd = `${base}/${name}`;
  await Deno.mkdir(cwd, { recursive: true });
  await Deno.writeTextFile(`${cwd}/f.txt`, "one\n");
  await gitOk(cwd, "init", "-q", "-b", "main", ".");
  await gitOk(cwd, "config", "user.name", "t");
  await gitOk(cwd, "config", "user.email", "t@example.invalid");
  await gitOk(cwd, "add", "f.txt");
  await gitOk(cwd, "commit", "-qm", "one");
  await chownTree(cwd);
  return cwd;
}

/** Every file and link under `root` but `skip` with its content, to show a refusal changed nothing. */
async function snapshot(root: string, skip: string): Promise<string> {
  const found: string[] = [];
  const walk = async (folder: string) => {
    for await (const entry of Deno.readDir(folder)) {
      const path = `${folder}/${entry.name}`;
      if (path === skip) continue;
      if (entry.isSymlink) found.push(`${path} -> ${await Deno.readLink(path)}`);
      else if (entry.isDirectory) {
        found.push(`${path}/`);
        await walk(path);
      } else found.push(`${path}: ${await Deno.readTextFile(path).catch(() => "(binary)")}`);
    }
  };
  await walk(root);
  return found.sort().join("\n");
}

/**
 * Asserts `command` in `<jail>/<cwd>` is refused with POLICY_DENIED by the
 * git-folder rule, that nothing ran or changed in the jail or outside it,
 * and that the attempt is audited as denied.
 */
async function refusedInGitFolder(h: Harness, command: string, cwd: string) {
  const before = await snapshot(h.dir, h.auditLog);
  const result = await h.call("run_command", { command, cwd });
  equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
  equal(result.exit_code, null, "nothing ran");
  match(result.policy_reason, /git folder/);
  equal(await snapshot(h.dir, h.auditLog), before, `${command}: something changed`);
  const attempt = (await h.records()).findLast((record) => record.command_raw === command);
  ok(attempt !== undefined, `no audit record for ${command}`);
  equal(attempt.verdict, "deny");
  equal(attempt.code, "POLICY_DENIED");
  return result;
}

async function ran(h: Harness, command: string, cwd: string) {
  const result = await h.call("run_command", { command, cwd });
  equal(result.code, "OK", `${command}: ${result.policy_reason}`);
  equal(result.exit_code, 0, `${command}: ${result.stderr}`);
  return result;
}

Deno.test("raw git acts on a planted MERGE_RR and worktrees/<id>/gitdir: rerere prints a host file, worktree repair writes outside", async () => {
  await rawProof("htmcp-gitstate-raw-", async (base) => {
    await Deno.writeTextFile(`${base}/secret.txt`, `${SECRET}\n`);
    const cwd = await makeRepository(base, "repo");
    await Deno.mkdir(`${cwd}/.git/rr-cache/${RERERE_ID}`, { recursive: true });
    await Deno.writeTextFile(`${cwd}/.git/rr-cache/${RERERE_ID}/preimage`, "");
    await Deno.writeTextFile(`${cwd}/.git/MERGE_RR`, `${RERERE_ID}\t${base}/secret.txt\0`);
    const diff = await raw(["rerere", "diff"], cwd);
    ok(diff.out.includes(SECRET), `raw rerere diff printed the host file: ${diff.out}${diff.err}`);

    await Deno.mkdir(`${base}/victim`);
    await Deno.mkdir(`${cwd}/.git/worktrees/x`, { recursive: true });
    await Deno.writeTextFile(`${cwd}/.git/worktrees/x/gitdir`, `${base}/victim/.git\n`);
    await Deno.writeTextFile(`${cwd}/.git/worktrees/x/commondir`, "../..\n");
    await Deno.copyFile(`${cwd}/.git/HEAD`, `${cwd}/.git/worktrees/x/HEAD`);
    await raw(["worktree", "repair"], cwd);
    ok(await exists(`${base}/victim/.git`), "raw worktree repair wrote into the outside folder");
  });
});

Deno.test("none: no command but git works inside a git folder (MERGE_RR, index, worktrees, links, a git folder under another name)", async (t) => {
  await inMode(t, "none", async (h) => {
    await Deno.writeTextFile(`${h.dir}/secret.txt`, `${SECRET}\n`);
    const cwd = await makeRepository(h.jail, "repo");
    // What the red team fed tr: MERGE_RR's tab, slashes and NUL spelled as letters.
    await Deno.writeTextFile(
      `${cwd}/t.txt`,
      `${RERERE_ID}Q${h.dir.replaceAll("/", "S")}Ssecret.txtZ`,
    );
    await Deno.copyFile(`${cwd}/.git/index`, `${cwd}/crafted-index`);
    await chownTree(h.jail);
    // A link into the git folder, as a checkout of a repository's links makes one.
    await Deno.symlink("repo/.git/MERGE_RR", `${h.jail}/w`);

    await t.step(
      "writing MERGE_RR, rr-cache, the index or a worktree's gitdir is refused",
      async () => {
        await refusedInGitFolder(h, `mkdir -p .git/rr-cache/${RERERE_ID}`, "repo");
        await refusedInGitFolder(h, "tr QSZ '\\011\\057\\000' < t.txt > .git/MERGE_RR", "repo");
        await refusedInGitFolder(h, "cp crafted-index .git/index", "repo");
        await refusedInGitFolder(h, "mkdir -p .git/worktrees/x", "repo");
        await refusedInGitFolder(h, "echo victim/.git > .git/worktrees/x/gitdir", "repo");
      },
    );

    await t.step("from inside the git folder, or through a link into it", async () => {
      await refusedInGitFolder(h, "echo x > MERGE_RR", "repo/.git");
      await refusedInGitFolder(h, "echo x > w", ".");
      // Reading is refused too: the rule cannot tell which arguments a tool writes.
      await refusedInGitFolder(h, "cat .git/HEAD", "repo");
    });

    await t.step("git may name its folder itself, never a file in it", async () => {
      // git archive's -o is allowed elsewhere; into the git folder it writes what the model chose.
      await refusedInGitFolder(h, "git archive -o .git/MERGE_RR HEAD", "repo");
      // Attached to the option, the value is still a path of its own.
      await refusedInGitFolder(h, "git archive -o.git/MERGE_RR HEAD", "repo");
      await refusedInGitFolder(h, "git -C .git/refs log --oneline", "repo");
      await ran(h, "git --git-dir=.git log --oneline", "repo");
      await ran(h, "git --git-dir repo/.git --work-tree repo log --oneline", ".");
      // Round eight: working in the git folder, git has no work tree and
      // `git apply` wrote the patch's paths (config) there.
      await refusedInGitFolder(h, "git --git-dir=. log --oneline", "repo/.git");
      await refusedInGitFolder(h, "git -C .git log --oneline", "repo");
      const patch = "diff --git a/config b/config\n--- a/config\n+++ b/config\n" +
        "@@ -0,0 +1,2 @@\n+[rebase]\n+\tinstructionFormat = %s%n%b\n";
      const before = await snapshot(h.dir, h.auditLog);
      const applied = await h.call("run_command", {
        command: "git apply --unidiff-zero",
        cwd: "repo/.git",
        stdin: patch,
      });
      equal(applied.code, "POLICY_DENIED", JSON.stringify(applied));
      equal(await snapshot(h.dir, h.auditLog), before, "the git folder's config is unchanged");
      // Round seven: words starting with "-" are paths to git too (an
      // option's value, a word after --), so they are judged like any other.
      await ran(h, "mkdir ./--x", "repo");
      await refusedInGitFolder(h, "git archive -o --x/../.git/PROOF HEAD", "repo");
      await refusedInGitFolder(h, "git worktree add -q --detach -- --x/../.git/wt HEAD", "repo");
      // A gitfile is not the git folder itself: git may not rewrite it.
      await ran(h, "git worktree add -q --detach sub2 HEAD", "repo");
      await ran(h, "touch a.txt b.txt", "repo");
      await refusedInGitFolder(h, "git merge-file --theirs sub2/.git a.txt b.txt", "repo");
    });

    await t.step(
      "a git folder built under another name is refused at the step that completes it",
      async () => {
        await ran(h, "mkdir st", ".");
        await ran(h, "echo x > st/MERGE_RR", ".");
        await ran(h, "mkdir st/objects", ".");
        await ran(h, "mkdir st/refs", ".");
        await refusedInGitFolder(h, "echo 'ref: refs/heads/main' > st/HEAD", ".");
        // One command line can still build one (its stages are checked before
        // any runs: the red team's round six), and so can a copy into a bare
        // folder git made. git never uses a git folder not named .git, though.
        await ran(
          h,
          `mkdir -p g/objects g/refs && echo 'ref: refs/heads/main' > g/HEAD && echo x > g/MERGE_RR`,
          ".",
        );
        for (
          const command of [
            "git --git-dir=g status",
            "git --git-dir=st log",
            "git init -q --bare st",
            "git init -q --bare fresh",
            "git init -q --separate-git-dir=sep sub",
          ]
        ) {
          const refused = await h.call("run_command", { command, cwd: "." });
          equal(refused.code, "POLICY_DENIED", `${command}: ${refused.policy_reason}`);
          match(refused.policy_reason, /not named \.git nor inside one/);
        }
        ok(!(await exists(`${h.jail}/st/HEAD`)), "git made no git folder of st");
        ok(!(await exists(`${h.jail}/fresh`)), "nor a bare repository");
      },
    );

    await t.step("work in the repository itself goes on", async () => {
      await ran(h, "echo two > f.txt", "repo");
      await ran(h, "git commit -qam two", "repo");
      const status = await ran(h, "git status --short", "repo");
      equal(status.stdout, "?? a.txt\n?? b.txt\n?? crafted-index\n?? sub2/\n?? t.txt\n");
      ok(!(await exists(`${cwd}/.git/MERGE_RR`)));
    });
  });
});

Deno.test("none: a repository handed over with such files planted is refused by the repository check", async (t) => {
  await inMode(t, "none", async (h) => {
    await Deno.writeTextFile(`${h.dir}/secret.txt`, `${SECRET}\n`);
    await Deno.mkdir(`${h.dir}/victim`);
    const plants: [string, (cwd: string) => Promise<void>, RegExp][] = [
      ["MERGE_RR", async (cwd) => {
        await Deno.writeTextFile(`${cwd}/.git/MERGE_RR`, `${RERERE_ID}\t${h.dir}/secret.txt\0`);
      }, /MERGE_RR file names a path outside the work tree/],
      ["apply-opt", async (cwd) => {
        await Deno.mkdir(`${cwd}/.git/rebase-apply`);
        await Deno.writeTextFile(
          `${cwd}/.git/rebase-apply/apply-opt`,
          ` '--build-fake-ancestor=${h.dir}/clobber'\n`,
        );
      }, /apply-opt file of the git am in progress/],
      ["worktrees", async (cwd) => {
        await Deno.mkdir(`${cwd}/.git/worktrees/x`, { recursive: true });
        await Deno.writeTextFile(`${cwd}/.git/worktrees/x/gitdir`, `${h.dir}/victim/.git\n`);
      }, /gitdir file of the work tree "x" leads outside the jail/],
      ["index", async (cwd) => {
        const bytes = await Deno.readFile(`${cwd}/.git/index`);
        const at = new TextDecoder("latin1").decode(bytes).indexOf("f.txt");
        bytes.set(new TextEncoder().encode("../xy"), at);
        await Deno.writeFile(`${cwd}/.git/index`, bytes);
      }, /index names a path outside the work tree/],
    ];
    for (const [name, plant, reason] of plants) {
      await t.step(
        `a planted ${name}: git status is refused, nothing read or written outside`,
        async () => {
          const cwd = await makeRepository(h.jail, `planted-${name}`);
          await plant(cwd);
          await chownTree(cwd);
          const command = "git status --short";
          const before = await snapshot(h.dir, h.auditLog);
          const result = await h.call("run_command", { command, cwd: `planted-${name}` });
          equal(result.code, "POLICY_DENIED", JSON.stringify(result));
          equal(result.exit_code, null, "nothing ran");
          match(result.policy_reason, /guard "git-repository"/);
          match(result.policy_reason, reason);
          ok(!result.policy_reason.includes(SECRET));
          equal(await snapshot(h.dir, h.auditLog), before, "nothing changed");
          const attempt = (await h.records()).findLast((record) => record.command_raw === command);
          ok(attempt !== undefined, "the attempt is audited");
          equal(attempt.code, "POLICY_DENIED");
          match(String(attempt.reason), reason);
        },
      );
    }
  });
});

Deno.test("none: rerere is off, so a conflicted file replaced by a link to a host file is never read through it", async (t) => {
  // The red team's chain in an ordinary repository with rerere.enabled: git
  // itself wrote MERGE_RR naming f, then a restore replaced f with a link
  // leading out, and `git rerere diff` printed the host file.
  const plant = async (cwd: string, secret: string) => {
    await gitOk(cwd, "config", "rerere.enabled", "true");
    await Deno.mkdir(`${cwd}/.git/rr-cache/${RERERE_ID}`, { recursive: true });
    await Deno.writeTextFile(`${cwd}/.git/rr-cache/${RERERE_ID}/preimage`, "");
    await Deno.writeTextFile(`${cwd}/.git/MERGE_RR`, `${RERERE_ID}\tf.txt\0`);
    await Deno.remove(`${cwd}/f.txt`);
    await Deno.symlink(secret, `${cwd}/f.txt`);
  };
  await rawProof("htmcp-rerere-raw-", async (base) => {
    await Deno.writeTextFile(`${base}/secret.txt`, `${SECRET}\n`);
    const cwd = await makeRepository(base, "repo");
    await plant(cwd, `${base}/secret.txt`);
    const diff = await raw(["rerere", "diff"], cwd);
    ok(diff.out.includes(SECRET), `raw rerere diff read through the link: ${diff.out}${diff.err}`);
  });

  await inMode(t, "none", async (h) => {
    await Deno.writeTextFile(`${h.dir}/secret.txt`, `${SECRET}\n`);
    const cwd = await makeRepository(h.jail, "rerere");
    await chownTree(cwd);
    await plant(cwd, `${h.dir}/secret.txt`);
    for (const command of ["git rerere diff", "git rerere", "git rerere status"]) {
      const result = await h.call("run_command", { command, cwd: "rerere" });
      equal(result.code, "OK", result.policy_reason);
      ok(!result.stdout.includes(SECRET) && !result.stderr.includes(SECRET), command);
    }
    ok(!(await exists(`${cwd}/.git/rr-cache/${RERERE_ID}/postimage`)), "nothing was copied");
  });
});

Deno.test("none: git am, which opens what a series file or Maildir lists, is refused (round eight read host files both ways)", async (t) => {
  const series = (secret: string) =>
    `# This series applies on GIT commit 0\n${"../".repeat(12)}${secret.slice(1)}\n`;
  await rawProof("htmcp-am-raw-", async (base) => {
    await Deno.writeTextFile(`${base}/secret.txt`, `Subject: ${SECRET}\n`);
    const cwd = await makeRepository(base, "repo");
    await Deno.writeTextFile(`${cwd}/series`, series(`${base}/secret.txt`));
    await raw(["am", "series"], cwd);
    const shown = await raw(["am", "--show-current-patch=raw"], cwd);
    ok(shown.out.includes(SECRET), `raw git am read the host file: ${shown.out}${shown.err}`);
  });

  await inMode(t, "none", async (h) => {
    await Deno.writeTextFile(`${h.dir}/secret.txt`, `Subject: ${SECRET}\n`);
    const cwd = await makeRepository(h.jail, "am");
    await Deno.writeTextFile(`${cwd}/series`, series(`${h.dir}/secret.txt`));
    await Deno.mkdir(`${cwd}/md/cur`, { recursive: true });
    await chownTree(cwd);
    for (
      const command of ["git am series", "git am --patch-format=stgit-series series", "git am md"]
    ) {
      const before = await snapshot(h.dir, h.auditLog);
      const result = await h.call("run_command", { command, cwd: "am" });
      equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
      equal(result.exit_code, null, "nothing ran");
      match(
        result.policy_reason,
        /"git am" opens the files a series file or a Maildir folder lists/,
      );
      equal(await snapshot(h.dir, h.auditLog), before, `${command}: nothing changed`);
    }
    ok(!(await exists(`${cwd}/.git/rebase-apply`)), "no am began");
  });
});

Deno.test("none: a repository's rebase.instructionFormat cannot write an exec line into the todo a rebase runs", async (t) => {
  // Round eight: "%s%n%b" copied a commit body's "exec ..." line into the
  // todo list git writes and runs in the same command.
  const build = async (cwd: string, canary: string) => {
    await gitOk(cwd, "config", "rebase.instructionFormat", "%s%n%b");
    await gitOk(cwd, "checkout", "-q", "-b", "side");
    await Deno.writeTextFile(`${cwd}/g.txt`, "g\n");
    await gitOk(cwd, "add", "g.txt");
    await gitOk(cwd, "commit", "-q", "-m", `two\n\nexec touch ${canary}`);
    await gitOk(cwd, "checkout", "-q", "main");
    await Deno.writeTextFile(`${cwd}/h.txt`, "h\n");
    await gitOk(cwd, "add", "h.txt");
    await gitOk(cwd, "commit", "-q", "-m", "three");
    await gitOk(cwd, "checkout", "-q", "side");
  };
  await rawProof("htmcp-fmt-raw-", async (base) => {
    const cwd = await makeRepository(base, "repo");
    await build(cwd, `${base}/PWNED`);
    await raw(["rebase", "main"], cwd);
    ok(await exists(`${base}/PWNED`), "raw git rebase ran the body's exec line");
  });

  await inMode(t, "none", async (h) => {
    const cwd = await makeRepository(h.jail, "fmt");
    // In the jail, which the command's uid can write (the harness folder is not).
    await build(cwd, `${h.jail}/PWNED`);
    await chownTree(cwd);
    const result = await h.call("run_command", { command: "git rebase main", cwd: "fmt" });
    equal(result.code, "OK", result.policy_reason);
    ok(!(await exists(`${h.jail}/PWNED`)), "no exec line ran");
    ok(!result.stderr.includes("Executing"), result.stderr);
  });
});

/**
 * A repository with a nested one at `sub` that the index names (a gitlink)
 * but no `.gitmodules` lists, whose own configuration runs `canary` as a
 * clean filter: what round nine planted.
 */
async function nestedWithFilter(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top");
  const sub = await makeRepository(top, "sub");
  await gitOk(sub, "config", "filter.x.clean", `touch ${canary}; cat`);
  await Deno.writeTextFile(`${sub}/.gitattributes`, "f.txt filter=x\n");
  await gitOk(top, "add", "sub");
  await gitOk(top, "commit", "-qm", "sub");
  // Changed at the same size: git status must read it again, through the filter.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Deno.writeTextFile(`${sub}/f.txt`, "two\n");
  return top;
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: a nested repository the index names (no .gitmodules) is inspected: its filter never runs`, async (t) => {
    await rawProof("htmcp-gitlink-raw-", async (base) => {
      const top = await nestedWithFilter(base, `${base}/RAN`);
      await raw(["status", "--short"], top);
      ok(await exists(`${base}/RAN`), "raw git status ran the nested repository's filter");
    });

    await inMode(t, mode, async (h) => {
      // In the jail: the command's uid can write there in both modes (the
      // harness folder around it is the server's, closed to that uid).
      const canary = `${h.jail}/RAN`;
      await nestedWithFilter(h.jail, canary);
      await chownTree(h.jail);
      const result = await h.call("run_command", { command: "git status --short", cwd: "top" });
      equal(result.code, "POLICY_DENIED", JSON.stringify(result));
      equal(result.exit_code, null, "nothing ran");
      match(result.policy_reason, /guard "git-repository"/);
      match(result.policy_reason, /names a program/);
      ok(!(await exists(canary)), "the filter never ran");
      const attempt = (await h.records()).findLast((r) => r.command_raw === "git status --short");
      equal(attempt?.code, "POLICY_DENIED");
    });
  });
}

/**
 * Round ten: a gitlink in commits but not in the index, an untracked nested
 * repository at its path whose diff.external runs `canary`, and
 * diff.submodule=diff in the top repository: `git show` ran it.
 */
async function submoduleInCommits(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top2");
  const sub = await makeRepository(top, "sub2");
  await gitOk(top, "add", "sub2");
  await gitOk(top, "commit", "-qm", "A");
  await Deno.writeTextFile(`${sub}/f.txt`, "two\n");
  await gitOk(sub, "commit", "-qam", "two");
  await gitOk(top, "add", "sub2");
  await gitOk(top, "commit", "-qm", "B");
  await gitOk(top, "rm", "-q", "--cached", "sub2");
  await gitOk(sub, "config", "diff.external", `sh -c 'touch ${canary}' --`);
  await gitOk(top, "config", "diff.submodule", "diff");
  return top;
}

Deno.test("none: git stays out of submodules: a nested repository's diff program never runs, and --submodule=diff is refused (round ten)", async (t) => {
  await rawProof("htmcp-subdiff-raw-", async (base) => {
    const top = await submoduleInCommits(base, `${base}/RAN`);
    await raw(["show", "--no-ext-diff"], top);
    ok(await exists(`${base}/RAN`), "raw git show ran the nested repository's diff.external");
    await Deno.remove(`${base}/RAN`);
    // The second line: git run as htmcp runs it does not enter the submodule.
    equal((await hardened(["show"], top)).code, 0);
    ok(!(await exists(`${base}/RAN`)), "hardened git show entered the submodule");
  });

  await inMode(t, "none", async (h) => {
    // In the jail, which the command's uid can write (the harness folder is not).
    const canary = `${h.jail}/RAN`;
    await submoduleInCommits(h.jail, canary);
    await chownTree(h.jail);
    // The first line (round twelve): every nested repository in the work
    // tree is inspected, named by the index or not.
    await refusedForNested(h, "git show", "top2", canary);
    const diffed = await h.call("run_command", {
      command: "git diff HEAD~1 HEAD --submodule=diff",
      cwd: "top2",
    });
    equal(diffed.code, "POLICY_DENIED", diffed.policy_reason);
    match(diffed.policy_reason, /guard "git-submodule-entry"/);
    ok(!(await exists(canary)), "nothing ran");
  });
});

/**
 * Round eleven: a branch whose commit holds a gitlink and a .gitmodules
 * with `ignore = none`; on main, the nested repository stays as an
 * untracked folder with a clean filter that runs `canary`. `git checkout
 * evil` wrote both, then listed the changed paths and entered it.
 */
async function submoduleArrivingWithCheckout(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top3");
  await gitOk(top, "checkout", "-q", "-b", "evil");
  const sub = await makeRepository(top, "sub2");
  await gitOk(top, "add", "sub2");
  await Deno.writeTextFile(
    `${top}/.gitmodules`,
    '[submodule "s"]\n\tpath = sub2\n\turl = https://example.invalid/x\n\tignore = none\n',
  );
  await gitOk(top, "add", ".gitmodules");
  await gitOk(top, "commit", "-qm", "evil");
  await gitOk(top, "checkout", "-q", "main");
  await gitOk(sub, "config", "filter.x.clean", `touch ${canary}; cat`);
  await Deno.writeTextFile(`${sub}/.gitattributes`, "f.txt filter=x\n");
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Deno.writeTextFile(`${sub}/f.txt`, "two\n");
  return top;
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: checkout and switch enter no submodule their own .gitmodules asks for (round eleven)`, async (t) => {
    await rawProof("htmcp-cosub-raw-", async (base) => {
      const top = await submoduleArrivingWithCheckout(base, `${base}/RAN`);
      await raw(["checkout", "evil"], top);
      ok(await exists(`${base}/RAN`), "raw git checkout ran the nested repository's filter");
    });
    for (const args of [["checkout", "evil"], ["switch", "evil"]]) {
      await rawProof("htmcp-cosub-hardened-", async (base) => {
        const top = await submoduleArrivingWithCheckout(base, `${base}/RAN`);
        equal((await hardened(args, top)).code, 0);
        ok(!(await exists(`${base}/RAN`)), `hardened git ${args[0]} entered the submodule`);
      });
    }

    await inMode(t, mode, async (h) => {
      const canary = `${h.jail}/RAN`;
      await submoduleArrivingWithCheckout(h.jail, canary);
      await chownTree(h.jail);
      for (const command of ["git checkout evil", "git switch evil"]) {
        await refusedForNested(h, command, "top3", canary);
      }
      // --no-quiet would undo the --quiet htmcp gives them (round twelve).
      const loud = await h.call("run_command", {
        command: "git checkout --no-quiet evil",
        cwd: "top3",
      });
      equal(loud.code, "POLICY_DENIED", loud.policy_reason);
      match(loud.policy_reason, /guard "git-no-quiet"/);
      ok(!(await exists(canary)), "nothing ran");
    });
  });
}

Deno.test("bwrap: writing git's files is allowed, and a crafted MERGE_RR reaches no host file", async (t) => {
  await inMode(t, "bwrap", async (h) => {
    await Deno.chmod(h.dir, 0o755);
    await Deno.writeTextFile(`${h.dir}/secret.txt`, `${SECRET}\n`);
    await Deno.chmod(`${h.dir}/secret.txt`, 0o644);
    const cwd = await makeRepository(h.jail, "repo");
    await Deno.writeTextFile(
      `${cwd}/t.txt`,
      `${RERERE_ID}Q${h.dir.replaceAll("/", "S")}Ssecret.txtZ`,
    );
    await chownTree(h.jail);
    await ran(h, `mkdir -p .git/rr-cache/${RERERE_ID}`, "repo");
    await ran(h, `touch .git/rr-cache/${RERERE_ID}/preimage`, "repo");
    await ran(h, "tr QSZ '\\011\\057\\000' < t.txt > .git/MERGE_RR", "repo");
    const diff = await h.call("run_command", { command: "git rerere diff", cwd: "repo" });
    equal(diff.code, "OK", diff.policy_reason);
    ok(!diff.stdout.includes(SECRET), `the sandbox kept the host file out: ${diff.stdout}`);
  });
});

/** A nested repository at `<top>/sub` whose .gitattributes names the filter `x` (armed by `armFilter`). */
async function nestedFilter(top: string): Promise<string> {
  const sub = await makeRepository(top, "sub");
  await Deno.writeTextFile(`${sub}/.gitattributes`, "f.txt filter=x\n");
  await gitOk(sub, "add", ".gitattributes");
  await gitOk(sub, "commit", "-qm", "attributes");
  return sub;
}

async function armFilter(sub: string, canary: string): Promise<void> {
  await gitOk(sub, "config", "filter.x.clean", `touch ${canary}; cat`);
  // Changed at the same size: git must read it again, through the filter.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Deno.writeTextFile(`${sub}/f.txt`, "two\n");
}

const UNMASKING_GITMODULES =
  '[submodule "s"]\n\tpath = sub\n\turl = https://example.invalid/x\n\tignore = none\n';

/**
 * Round twelve: the stash holds a gitlink `sub` and a .gitmodules with
 * `ignore = none`; neither is in the index or the work tree, where `sub` is
 * an untracked nested repository with a filter. `git stash pop` wrote both,
 * then listed the status, entering `sub`.
 */
async function submoduleInStash(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top4");
  const sub = await nestedFilter(top);
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES);
  await gitOk(top, "add", ".gitmodules", "sub");
  await gitOk(top, "stash", "-q");
  await armFilter(sub, canary);
  return top;
}

/**
 * Round twelve: a committed gitlink unmasked by a committed .gitmodules,
 * the real work tree hidden from the check by a config.worktree git
 * ignores (no extensions.worktreeConfig) naming an empty folder.
 */
async function workTreeHiddenByConfigWorktree(base: string, canary: string): Promise<string> {
  await Deno.mkdir(`${base}/empty`);
  const top = await makeRepository(base, "top5");
  const sub = await nestedFilter(top);
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES);
  await gitOk(top, "add", ".gitmodules", "sub");
  await gitOk(top, "commit", "-qm", "sub");
  await Deno.writeTextFile(`${top}/.git/config.worktree`, "[core]\n\tworktree = ../../empty\n");
  await armFilter(sub, canary);
  return top;
}

/**
 * Round twelve: the index's gitlink has mode 0160644 (git's S_ISGITLINK
 * tests the type bits only), and .gitmodules is read from HEAD.
 */
async function gitlinkWithModeBits(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top6");
  const sub = await nestedFilter(top);
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES);
  await gitOk(top, "add", ".gitmodules", "sub");
  await gitOk(top, "commit", "-qm", "sub");
  await gitOk(top, "rm", "-q", "--cached", ".gitmodules");
  await Deno.remove(`${top}/.gitmodules`);
  const index = await Deno.readFile(`${top}/.git/index`);
  // The entry "sub": its mode is 24 bytes into the entry, whose fixed part is 62 bytes.
  const at = new TextDecoder("latin1").decode(index).indexOf("sub\0") - 62;
  const view = new DataView(index.buffer);
  equal(view.getUint32(at + 24), 0o160000, "setup: found the gitlink");
  view.setUint32(at + 24, 0o160644);
  const body = index.subarray(0, index.byteLength - 20);
  index.set(new Uint8Array(await crypto.subtle.digest("SHA-1", body)), index.byteLength - 20);
  await Deno.writeFile(`${top}/.git/index`, index);
  await armFilter(sub, canary);
  return top;
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: stash pop and apply enter no nested repository the stash's .gitmodules unmasks (round twelve)`, async (t) => {
    await rawProof("htmcp-stash-raw-", async (base) => {
      const top = await submoduleInStash(base, `${base}/RAN`);
      await raw(["stash", "pop"], top);
      ok(await exists(`${base}/RAN`), "raw git stash pop ran the nested repository's filter");
    });
    for (const verb of ["pop", "apply"]) {
      await rawProof("htmcp-stash-hardened-", async (base) => {
        const top = await submoduleInStash(base, `${base}/RAN`);
        const run = await hardened(["stash", verb], top);
        equal(run.code, 0, run.err);
        ok(!(await exists(`${base}/RAN`)), `hardened git stash ${verb} entered the submodule`);
      });
    }

    await inMode(t, mode, async (h) => {
      const canary = `${h.jail}/RAN`;
      await submoduleInStash(h.jail, canary);
      await chownTree(h.jail);
      await refusedForNested(h, "git stash pop", "top4", canary);
      await refusedForNested(h, "git stash apply", "top4", canary);
      const branch = await h.call("run_command", { command: "git stash branch x", cwd: "top4" });
      equal(branch.code, "POLICY_DENIED", branch.policy_reason);
      match(branch.policy_reason, /guard "git-stash-branch"/);
      ok(!(await exists(canary)), "nothing ran");
    });
  });

  Deno.test(`${mode}: a nested repository behind an ignored config.worktree or a gitlink with extra mode bits is inspected (round twelve)`, async (t) => {
    for (const setup of [workTreeHiddenByConfigWorktree, gitlinkWithModeBits]) {
      await rawProof("htmcp-hidden-raw-", async (base) => {
        const top = await setup(base, `${base}/RAN`);
        await raw(["status", "--short"], top);
        ok(await exists(`${base}/RAN`), `${setup.name}: raw git status ran the filter`);
      });
    }

    await inMode(t, mode, async (h) => {
      const canary = `${h.jail}/RAN`;
      await workTreeHiddenByConfigWorktree(h.jail, canary);
      await gitlinkWithModeBits(h.jail, canary);
      await chownTree(h.jail);
      await refusedForNested(h, "git status --short", "top5", canary);
      await refusedForNested(h, "git status --short", "top6", canary);
    });
  });
}

Deno.test("none: autostash is off and guarded, and a saved one is refused but for --quit (round twelve)", async (t) => {
  await rawProof("htmcp-autostash-raw-", async (base) => {
    const top = await submoduleArrivingWithCheckout(base, `${base}/RAN`);
    await Deno.writeTextFile(`${top}/f.txt`, "dirty\n");
    await gitOk(top, "config", "merge.autoStash", "true");
    await raw(["merge", "-q", "evil"], top);
    ok(await exists(`${base}/RAN`), "raw git merge applied the autostash, entering the submodule");
  });
  await rawProof("htmcp-autostash-hardened-", async (base) => {
    const top = await submoduleArrivingWithCheckout(base, `${base}/RAN`);
    await Deno.writeTextFile(`${top}/f.txt`, "dirty\n");
    await gitOk(top, "config", "merge.autoStash", "true");
    await hardened(["merge", "-q", "evil"], top);
    ok(!(await exists(`${base}/RAN`)), "hardened git merge autostashed");
  });

  await inMode(t, "none", async (h) => {
    const canary = `${h.jail}/RAN`;
    const top = await makeRepository(h.jail, "saved");
    const flagged = await h.call("run_command", {
      command: "git merge --autostash main",
      cwd: "saved",
    });
    equal(flagged.code, "POLICY_DENIED", flagged.policy_reason);
    match(flagged.policy_reason, /guard "git-autostash"/);
    await Deno.writeTextFile(
      `${top}/.git/MERGE_AUTOSTASH`,
      "0123456789012345678901234567890123456789\n",
    );
    await chownTree(top);
    for (const command of ["git merge --abort", "git commit -m x", "git status"]) {
      const result = await h.call("run_command", { command, cwd: "saved" });
      equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
      equal(result.exit_code, null);
      match(result.policy_reason, /saved an autostash \("MERGE_AUTOSTASH"\)/);
      const attempt = (await h.records()).findLast((r) => r.command_raw === command);
      equal(attempt?.code, "POLICY_DENIED");
    }
    const quit = await h.call("run_command", { command: "git merge --quit", cwd: "saved" });
    equal(quit.code, "OK", quit.policy_reason);
    ok(!(await exists(canary)));
  });
});

Deno.test("bwrap: git after or beside a stage that may write files is refused; git after git runs (round twelve)", async (t) => {
  await inMode(t, "bwrap", async (h) => {
    const canary = `${h.jail}/RAN`;
    const top = await makeRepository(h.jail, "top7");
    const sub = await makeRepository(top, "sub");
    await chownTree(h.jail);
    // The red team's plan: the .gitmodules and the gitlink come from earlier
    // stages, so the check of the last stage saw neither; here the filter is
    // written by an earlier stage too.
    const planted = `echo '[filter "x"] clean = touch ${canary}' >> sub/.git/config`;
    for (
      const command of [
        `${planted} && git status --short`,
        `echo '[submodule "s"] path = sub' > .gitmodules && git add sub && git status`,
        `git status | cat > .gitmodules`,
        `git log > .gitmodules | git status`,
        // Round twenty: writers a list of commands known to write nothing had held.
        `xxd -r -p f.txt .git/config && git status --short`,
        `shuf -o .git/config f.txt ; git status --short`,
      ]
    ) {
      const result = await h.call("run_command", { command, cwd: "top7" });
      equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
      equal(result.exit_code, null);
      match(result.policy_reason, /may write files; git's repository check/);
      const attempt = (await h.records()).findLast((r) => r.command_raw === command);
      equal(attempt?.code, "POLICY_DENIED");
    }
    ok(!(await exists(canary)));
    ok(!(await Deno.readTextFile(`${sub}/.git/config`)).includes("filter"), "nothing ran");
    const gitThenGit = await h.call("run_command", {
      command: "git add f.txt && git status --short && git log --oneline | cat | sort",
      cwd: "top7",
    });
    equal(gitThenGit.code, "OK", gitThenGit.policy_reason);
    equal(gitThenGit.exit_code, 0, gitThenGit.stderr);
  });
});

/**
 * Round thirteen: `b/.git` is a gitfile naming the top repository's own git
 * folder, and `b/.gitmodules` unmasks a gitlink `deeper` (in the top's
 * index) whose nested repository has a filter. git entered `b`, then
 * `b/deeper`; the check had searched the top's git folder's work tree once.
 */
async function gitFolderReachedTwice(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top8");
  const deeper = await nestedFilter(`${top}/b`);
  const commit = (await raw(["rev-parse", "HEAD"], deeper)).out.trim();
  await Deno.writeTextFile(`${top}/b/.git`, "gitdir: ../.git\n");
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES.replace("= sub", "= b"));
  await Deno.writeTextFile(`${top}/b/.gitmodules`, UNMASKING_GITMODULES);
  for (const path of ["b", "sub"]) {
    await gitOk(top, "update-index", "--add", "--cacheinfo", `160000,${commit},${path}`);
  }
  await gitOk(top, "add", ".gitmodules");
  await gitOk(top, "commit", "-qm", "subs");
  await armFilter(deeper, canary);
  return top;
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: a git folder reached again from a gitfile in a subfolder has that work tree searched too (round thirteen)`, async (t) => {
    await rawProof("htmcp-twice-raw-", async (base) => {
      const top = await gitFolderReachedTwice(base, `${base}/RAN`);
      await hardened(["status", "--short"], top);
      ok(await exists(`${base}/RAN`), "git, hardened as htmcp runs it, ran the filter");
    });

    await inMode(t, mode, async (h) => {
      const canary = `${h.jail}/RAN`;
      await gitFolderReachedTwice(h.jail, canary);
      await chownTree(h.jail);
      await refusedForNested(h, "git status --short", "top8", canary);
    });
  });
}

/**
 * Round thirteen: a linked work tree outside the top's work tree whose own
 * config.worktree names a filter, and a committed gitlink `sub` unmasked
 * by .gitmodules: `git worktree move ../wt sub && git status` moved the
 * unchecked repository in, and the second git entered it.
 */
async function linkedWorkTreeOutside(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top9");
  await Deno.writeTextFile(`${top}/.gitattributes`, "f.txt filter=x\n");
  await gitOk(top, "add", ".gitattributes");
  await gitOk(top, "commit", "-qm", "attributes");
  await gitOk(top, "worktree", "add", "-q", "../wt", "-b", "side");
  await gitOk(top, "config", "core.repositoryformatversion", "1");
  await gitOk(top, "config", "extensions.worktreeConfig", "true");
  await Deno.writeTextFile(
    `${top}/.git/worktrees/wt/config.worktree`,
    `[filter "x"]\n\tclean = touch ${canary}; cat\n`,
  );
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES);
  const commit = (await raw(["rev-parse", "HEAD"], top)).out.trim();
  await gitOk(top, "update-index", "--add", "--cacheinfo", `160000,${commit},sub`);
  await gitOk(top, "add", ".gitmodules");
  await gitOk(top, "commit", "-qm", "sub");
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Deno.writeTextFile(`${base}/wt/f.txt`, "two\n");
  return top;
}

Deno.test("bwrap: git that makes or moves a repository is not followed by git in one plan (round thirteen)", async (t) => {
  await rawProof("htmcp-wtmove-raw-", async (base) => {
    const top = await linkedWorkTreeOutside(base, `${base}/RAN`);
    equal((await hardened(["worktree", "move", "../wt", "sub"], top)).code, 0);
    await hardened(["status", "--short"], top);
    ok(await exists(`${base}/RAN`), "git, hardened as htmcp runs it, entered the moved work tree");
  });

  await inMode(t, "bwrap", async (h) => {
    const canary = `${h.jail}/RAN`;
    await linkedWorkTreeOutside(h.jail, canary);
    await chownTree(h.jail);
    // Since round fifteen the linked work tree's own configuration is
    // inspected from the main one, so the check refuses this plan first.
    const command = "git worktree move ../wt sub && git status --short";
    const result = await h.call("run_command", { command, cwd: "top9" });
    equal(result.code, "POLICY_DENIED", JSON.stringify(result));
    equal(result.exit_code, null);
    match(result.policy_reason, /names a program git would run|may write files/);
    ok(!(await exists(canary)), "nothing ran");
    ok(await exists(`${h.jail}/wt/f.txt`), "the linked work tree was not moved");
    const attempt = (await h.records()).findLast((r) => r.command_raw === command);
    equal(attempt?.code, "POLICY_DENIED");
    // The plan rule on its own, in a clean repository: a git that makes or
    // moves a repository is a writer for the git after it.
    const clean = await makeRepository(h.jail, "clean9");
    await chownTree(clean);
    for (
      const plan of [
        "git worktree add -q ../wt9 && git status --short",
        "git mv f.txt g.txt && git status --short",
        "git init -q inner && git status --short",
        // Round eighteen: writers a list of writers had missed.
        "git merge-file f.txt f.txt f.txt && git status --short",
        "git mailinfo msg patch < f.txt && git status --short",
        "git merge-file f.txt f.txt f.txt | git status --short",
      ]
    ) {
      const refused = await h.call("run_command", { command: plan, cwd: "clean9" });
      equal(refused.code, "POLICY_DENIED", `${plan}: ${JSON.stringify(refused)}`);
      match(refused.policy_reason, /may write files; git's repository check/);
      equal(refused.exit_code, null);
    }
    ok(!(await exists(`${h.jail}/wt9`)), "nothing ran");
    ok(await exists(`${clean}/f.txt`), "nothing ran");
  });
});

/**
 * Round fourteen: a repository under a folder named `.GIT` (an ordinary
 * folder to git on Linux), its gitlink only in a split index's shared part
 * and its .gitmodules only in the index. The check took the work tree for
 * a git folder by its name and searched nothing.
 */
async function underUpperCaseGit(base: string, canary: string): Promise<string> {
  const top = await makeRepository(`${base}/.GIT`, "top");
  const sub = await nestedFilter(top);
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES);
  await gitOk(top, "add", ".gitmodules", "sub");
  await gitOk(top, "commit", "-qm", "sub");
  await Deno.remove(`${top}/.gitmodules`);
  await gitOk(top, "update-index", "--split-index");
  await armFilter(sub, canary);
  return top;
}

Deno.test("bwrap: a work tree under a folder named .GIT is searched like any other (round fourteen)", async (t) => {
  await rawProof("htmcp-uppergit-raw-", async (base) => {
    const top = await underUpperCaseGit(base, `${base}/RAN`);
    await hardened(["status", "--short"], top);
    ok(await exists(`${base}/RAN`), "git, hardened as htmcp runs it, ran the filter");
  });

  await inMode(t, "bwrap", async (h) => {
    const canary = `${h.jail}/RAN`;
    await underUpperCaseGit(h.jail, canary);
    await chownTree(h.jail);
    await refusedForNested(h, "git status --short", ".GIT/top", canary);
  });
});

/**
 * Round fifteen: a linked work tree outside the main one, whose own
 * config.worktree names a filter. `git worktree remove ../wt` asks that
 * work tree's status first, with a git that reads its config.worktree.
 */
async function linkedWorkTreeWithFilter(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top10");
  await Deno.writeTextFile(`${top}/.gitattributes`, "f.txt filter=x\n");
  await gitOk(top, "add", ".gitattributes");
  await gitOk(top, "commit", "-qm", "attributes");
  await gitOk(top, "worktree", "add", "-q", "../wt10", "-b", "side");
  await gitOk(top, "config", "core.repositoryformatversion", "1");
  await gitOk(top, "config", "extensions.worktreeConfig", "true");
  await Deno.writeTextFile(
    `${top}/.git/worktrees/wt10/config.worktree`,
    `[filter "x"]\n\tclean = touch ${canary}; cat\n`,
  );
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Deno.writeTextFile(`${base}/wt10/f.txt`, "two\n");
  return top;
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: every linked work tree is inspected from the main one: worktree remove runs none of its programs (round fifteen)`, async (t) => {
    await rawProof("htmcp-wtremove-raw-", async (base) => {
      const top = await linkedWorkTreeWithFilter(base, `${base}/RAN`);
      await hardened(["worktree", "remove", "../wt10"], top);
      ok(await exists(`${base}/RAN`), "git, hardened as htmcp runs it, ran the linked filter");
    });

    await inMode(t, mode, async (h) => {
      const canary = `${h.jail}/RAN`;
      await linkedWorkTreeWithFilter(h.jail, canary);
      await chownTree(h.jail);
      await refusedForNested(h, "git worktree remove ../wt10", "top10", canary);
      ok(await exists(`${h.jail}/wt10/f.txt`), "the linked work tree is still there");
    });
  });
}

/**
 * Round sixteen: the repository's git folder is its own work tree (its
 * files moved up, `.git` a gitfile `gitdir: .`), the gitlink `sub` only in
 * a split index's shared part. The check skipped a git folder taken as its
 * own work tree.
 */
async function gitFolderAsItsOwnWorkTree(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top11");
  const sub = await nestedFilter(top);
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES);
  await gitOk(top, "add", ".gitmodules", "sub");
  await gitOk(top, "commit", "-qm", "sub");
  await Deno.remove(`${top}/.gitmodules`);
  await gitOk(top, "update-index", "--split-index");
  await armFilter(sub, canary);
  for await (const entry of Deno.readDir(`${top}/.git`)) {
    await Deno.rename(`${top}/.git/${entry.name}`, `${top}/${entry.name}`);
  }
  await Deno.remove(`${top}/.git`);
  await Deno.writeTextFile(`${top}/.git`, "gitdir: .\n");
  return top;
}

Deno.test("bwrap: a git folder taken as its own work tree is searched like any other (round sixteen)", async (t) => {
  await rawProof("htmcp-gitdir-dot-raw-", async (base) => {
    const top = await gitFolderAsItsOwnWorkTree(base, `${base}/RAN`);
    await hardened(["status", "--short"], top);
    ok(await exists(`${base}/RAN`), "git, hardened as htmcp runs it, ran the filter");
  });

  await inMode(t, "bwrap", async (h) => {
    const canary = `${h.jail}/RAN`;
    await gitFolderAsItsOwnWorkTree(h.jail, canary);
    await chownTree(h.jail);
    await refusedForNested(h, "git status --short", "top11", canary);
    await refusedForNested(h, "git --git-dir=. status --short", "top11", canary);
  });
});

/**
 * Round seventeen: a linked work tree's admin folder with HEAD and
 * commondir but no gitdir file, whose config.worktree names a filter, and
 * `git --bare` run inside it: git took the cwd as its git folder, which the
 * check inspected only when it held a config.
 */
async function adminFolderWithoutGitdir(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top12");
  await Deno.writeTextFile(`${top}/.gitattributes`, "f.txt filter=x\n");
  await gitOk(top, "add", ".gitattributes");
  await gitOk(top, "commit", "-qm", "attributes");
  await gitOk(top, "config", "core.repositoryformatversion", "1");
  await gitOk(top, "config", "extensions.worktreeConfig", "true");
  await Deno.writeTextFile(`${top}/.git/info/attributes`, "f.txt filter=x\n");
  const admin = `${top}/.git/worktrees/w`;
  await Deno.mkdir(admin, { recursive: true });
  await Deno.writeTextFile(`${admin}/HEAD`, "ref: refs/heads/main\n");
  await Deno.writeTextFile(`${admin}/commondir`, "../..\n");
  await Deno.writeTextFile(
    `${admin}/config.worktree`,
    `[filter "x"]\n\tsmudge = touch ${canary}; cat\n\tclean = touch ${canary}; cat\n`,
  );
  return admin;
}

/**
 * Round seventeen: `sub`'s git folder is `x`, a tracked folder of the top
 * repository; branch `evil` adds a filter to `x/config`. A first git stage
 * checked it out, the second entered `sub` with it.
 */
async function nestedConfigTracked(base: string, canary: string): Promise<string> {
  const top = await makeRepository(base, "top13");
  const sub = await nestedFilter(top);
  await Deno.writeTextFile(`${sub}/.gitattributes`, "f.txt filter=y\n");
  await gitOk(sub, "add", ".gitattributes");
  await gitOk(sub, "commit", "-qm", "y");
  await Deno.rename(`${sub}/.git`, `${top}/x`);
  await Deno.writeTextFile(`${sub}/.git`, "gitdir: ../x\n");
  await Deno.writeTextFile(`${top}/.gitmodules`, UNMASKING_GITMODULES);
  await gitOk(top, "add", ".gitmodules", "sub", "x");
  await gitOk(top, "commit", "-qm", "c1");
  await gitOk(top, "checkout", "-q", "-b", "evil");
  await Deno.writeTextFile(
    `${top}/x/config`,
    `${await Deno.readTextFile(`${top}/x/config`)}[filter "y"]\n\tclean = touch ${canary}; cat\n`,
  );
  await gitOk(top, "add", "x/config");
  await gitOk(top, "commit", "-qm", "c2");
  await gitOk(top, "checkout", "-q", "main");
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Deno.writeTextFile(`${sub}/f.txt`, "two\n");
  return top;
}

Deno.test("bwrap: git --bare in a git folder without a config, and a git that writes tracked files before another, are refused (round seventeen)", async (t) => {
  await rawProof("htmcp-bare-raw-", async (base) => {
    const admin = await adminFolderWithoutGitdir(base, `${base}/RAN`);
    await hardened(["--bare", "cat-file", "--filters", "HEAD:f.txt"], admin);
    ok(await exists(`${base}/RAN`), "git, hardened as htmcp runs it, ran the filter");
  });
  await rawProof("htmcp-tracked-config-raw-", async (base) => {
    const top = await nestedConfigTracked(base, `${base}/RAN`);
    equal((await hardened(["checkout", "evil", "--", "x/config"], top)).code, 0);
    await hardened(["status", "--short"], top);
    ok(
      await exists(`${base}/RAN`),
      "git, hardened as htmcp runs it, entered the changed nested repository",
    );
  });

  await inMode(t, "bwrap", async (h) => {
    const canary = `${h.jail}/RAN`;
    const admin = await adminFolderWithoutGitdir(h.jail, canary);
    await nestedConfigTracked(h.jail, canary);
    await chownTree(h.jail);
    await refusedForNested(
      h,
      "git --bare cat-file --filters HEAD:f.txt",
      admin.slice(h.jail.length + 1),
      canary,
    );
    for (
      const command of [
        "git checkout evil -- x/config && git status --short",
        "git merge -q --ff-only evil && git status --short",
      ]
    ) {
      const result = await h.call("run_command", { command, cwd: "top13" });
      equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
      equal(result.exit_code, null);
      match(result.policy_reason, /may write files; git's repository check/);
      const attempt = (await h.records()).findLast((r) => r.command_raw === command);
      equal(attempt?.code, "POLICY_DENIED");
    }
    ok(!(await exists(canary)), "nothing ran");
    const alone = await h.call("run_command", { command: "git status --short", cwd: "top13" });
    equal(alone.code, "OK", alone.policy_reason);
    ok(!(await exists(canary)), "the clean configuration runs nothing");
  });
});

/**
 * Round nineteen: `.git/COMMIT_EDITMSG` a link to `config`, which every
 * commit writes by name: `git commit -m '<a filter section>'` rewrote the
 * config, and the next git of the same call ran the filter.
 */
async function commitMessageLinkedToConfig(base: string): Promise<string> {
  const top = await makeRepository(base, "top14");
  await Deno.writeTextFile(`${top}/.gitattributes`, "f.txt filter=x\n");
  await gitOk(top, "add", ".gitattributes");
  await gitOk(top, "commit", "-qm", "attributes");
  await Deno.remove(`${top}/.git/COMMIT_EDITMSG`).catch(() => {});
  await Deno.symlink("config", `${top}/.git/COMMIT_EDITMSG`);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await Deno.writeTextFile(`${top}/f.txt`, "two\n");
  return top;
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: a link in a git folder is refused, leading anywhere: git would write through it (round nineteen)`, async (t) => {
    const message = (canary: string) => `[filter "x"] clean = touch ${canary}; cat`;
    await rawProof("htmcp-editmsg-raw-", async (base) => {
      const top = await commitMessageLinkedToConfig(base);
      await hardened(["commit", "--allow-empty", "-m", message(`${base}/RAN`)], top);
      await hardened(["status", "--short"], top);
      ok(await exists(`${base}/RAN`), "git, hardened as htmcp runs it, ran the filter");
    });

    await inMode(t, mode, async (h) => {
      const canary = `${h.jail}/RAN`;
      const top = await commitMessageLinkedToConfig(h.jail);
      await chownTree(h.jail);
      const config = await Deno.readTextFile(`${top}/.git/config`);
      const command = `git commit --allow-empty -m '${message(canary)}' && git status --short`;
      const result = await h.call("run_command", { command, cwd: "top14" });
      equal(result.code, "POLICY_DENIED", JSON.stringify(result));
      equal(result.exit_code, null, "nothing ran");
      match(result.policy_reason, /the git folder holds a symlink/);
      equal(await Deno.readTextFile(`${top}/.git/config`), config, "the config is unchanged");
      ok(!(await exists(canary)));
      const attempt = (await h.records()).findLast((r) => r.command_raw === command);
      equal(attempt?.code, "POLICY_DENIED");
    });
  });
}
