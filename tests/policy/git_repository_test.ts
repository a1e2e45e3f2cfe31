/**
 * The repository check: planted repository files that make git read outside
 * the jail or run a program. Each case first shows that plain git (or git
 * with htmcp's own `-c`/env hardening) really uses the planted file, then
 * that `inspectGitRepository`, reading the same files through the real
 * reader, refuses the command. Real repositories, real git, real files.
 */
import { equal, match, ok } from "node:assert/strict";
import { commandHardening, inspectGitRepository } from "../../src/policy/mod.ts";
import { gitRepositoryReader } from "../../src/jail/mod.ts";
import { DEFAULT_CHILD_PATH } from "../../src/config/types.ts";
import { resolveOnPath } from "../_helpers/policy.ts";

const GIT = resolveOnPath("git");
const IDENTITY = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};

interface Box {
  /** Temp folder holding the jail and the "host" files outside it. */
  readonly base: string;
  /** The jail's real path; a repository with one commit lives at its root. */
  readonly jail: string;
  /** A host file outside the jail. */
  readonly secret: string;
}

async function git(
  cwd: string,
  args: readonly string[],
  options: { hardened?: boolean; jail?: string } = {},
): Promise<{ code: number; out: string; err: string }> {
  const hardening = options.hardened ? commandHardening(GIT, options.jail ?? null) : null;
  const result = await new Deno.Command(GIT.path, {
    args: [...(hardening?.prependArgs ?? []), ...args],
    cwd,
    clearEnv: true,
    env: { PATH: DEFAULT_CHILD_PATH, HOME: cwd, ...IDENTITY, ...(hardening?.env ?? {}) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  const text = new TextDecoder();
  return { code: result.code, out: text.decode(result.stdout), err: text.decode(result.stderr) };
}

async function makeBox(): Promise<Box> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-repo-" }));
  const jail = `${base}/jail`;
  await Deno.mkdir(jail);
  const secret = `${base}/secret.txt`;
  await Deno.writeTextFile(secret, "TOP-SECRET-LINE\n");
  equal((await git(jail, ["init", "-q", "."])).code, 0);
  await Deno.writeTextFile(`${jail}/f.txt`, "one\n");
  equal((await git(jail, ["add", "f.txt"])).code, 0);
  equal((await git(jail, ["commit", "-qm", "one"])).code, 0);
  return { base, jail, secret };
}

async function check(box: Box, args: readonly string[], cwd = box.jail) {
  return await inspectGitRepository(
    { jailRoot: box.jail, cwd, args },
    gitRepositoryReader(box.jail),
  );
}

async function withBox(body: (box: Box) => Promise<void>): Promise<void> {
  const box = await makeBox();
  try {
    await body(box);
  } finally {
    await Deno.remove(box.base, { recursive: true });
  }
}

async function setConfig(box: Box, key: string, value: string): Promise<void> {
  equal((await git(box.jail, ["config", key, value])).code, 0);
}

Deno.test("the repository check accepts an ordinary cloned-looking repository", async () => {
  await withBox(async (box) => {
    await setConfig(box, "remote.origin.url", "https://example.com/x.git");
    await setConfig(box, "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*");
    await setConfig(box, "branch.main.remote", "origin");
    await setConfig(box, "branch.main.merge", "refs/heads/main");
    await setConfig(box, "user.name", "Some One");
    await Deno.mkdir(`${box.jail}/sub`);
    for (const args of [["status"], ["log", "--oneline"], ["fetch", "origin"]]) {
      equal((await check(box, args)).ok, true, args.join(" "));
    }
    equal((await check(box, ["status"], `${box.jail}/sub`)).ok, true, "from a subfolder");
  });
});

Deno.test("the repository check refuses blame.ignoreRevsFile naming a host file, which git reads", async () => {
  await withBox(async (box) => {
    await setConfig(box, "blame.ignoreRevsFile", box.secret);
    const raw = await git(box.jail, ["blame", "f.txt"], { hardened: true, jail: box.jail });
    ok(raw.err.includes("TOP-SECRET-LINE"), `hardened git printed the host file: ${raw.err}`);
    const verdict = await check(box, ["blame", "f.txt"]);
    ok(!verdict.ok);
    match(verdict.reason, /leads outside the jail/);
  });
});

Deno.test("the repository check refuses a relative config value through a symlink leading out", async () => {
  await withBox(async (box) => {
    await Deno.symlink(box.secret, `${box.jail}/revs`);
    await setConfig(box, "blame.ignoreRevsFile", "revs");
    const raw = await git(box.jail, ["blame", "f.txt"], { hardened: true, jail: box.jail });
    ok(raw.err.includes("TOP-SECRET-LINE"), raw.err);
    ok(!(await check(box, ["blame", "f.txt"])).ok);
  });
});

for (
  const [key, value] of [
    ["commit.template", "~/x"],
    ["core.excludesFile", "%(prefix)/etc/x"],
    ["mailmap.file", "file:///etc/passwd"],
    ["core.attributesFile", "../secret.txt"],
  ]
) {
  Deno.test(`the repository check refuses ${key} = ${value}`, async () => {
    await withBox(async (box) => {
      await setConfig(box, key as string, value as string);
      ok(!(await check(box, ["status"])).ok);
    });
  });
}

Deno.test("the repository check refuses include.path, which git follows to any file", async () => {
  await withBox(async (box) => {
    await Deno.writeTextFile(`${box.base}/included`, "[x]\n\ty = from-the-host\n");
    await setConfig(box, "include.path", `${box.base}/included`);
    const raw = await git(box.jail, ["config", "x.y"]);
    equal(raw.out.trim(), "from-the-host");
    const verdict = await check(box, ["status"]);
    ok(!verdict.ok);
    match(verdict.reason, /includes another configuration file/);
  });
});

Deno.test("the repository check refuses branch.*.mergeoptions, whatever it holds (git merge takes it as typed)", async () => {
  await withBox(async (box) => {
    // Round nine: "-F /host/file" read a host file into the merge message;
    // "'-sresolve'" (git's quoting) ran the resolve script.
    for (const value of ["-F /etc/passwd", "'-sresolve'", "--no-ff"]) {
      await setConfig(box, "branch.main.mergeoptions", value);
      const verdict = await check(box, ["merge", "other"]);
      ok(!verdict.ok, value);
      ok(verdict.reason.includes("mergeoptions"), verdict.reason);
    }
  });
});

Deno.test("the repository check refuses includeIf", async () => {
  await withBox(async (box) => {
    await setConfig(box, "includeIf.gitdir:/.path", `${box.base}/included`);
    ok(!(await check(box, ["status"])).ok);
  });
});

Deno.test("the repository check refuses core.worktree, which points git at a host folder", async () => {
  await withBox(async (box) => {
    await Deno.mkdir(`${box.base}/host`);
    await Deno.writeTextFile(`${box.base}/host/private.txt`, "x\n");
    await setConfig(box, "core.worktree", `${box.base}/host`);
    const raw = await git(box.jail, ["status", "--porcelain"], { hardened: true, jail: box.jail });
    ok(raw.out.includes("private.txt"), `git listed the host folder: ${raw.out}`);
    const verdict = await check(box, ["status"]);
    ok(!verdict.ok);
    match(verdict.reason, /core\.worktree|leads outside/);
  });
});

Deno.test("the repository check refuses a gitfile pointing outside the jail", async () => {
  await withBox(async (box) => {
    const host = `${box.base}/host-repo`;
    equal((await git(box.base, ["init", "-q", host])).code, 0);
    await Deno.mkdir(`${box.jail}/w`);
    await Deno.writeTextFile(`${box.jail}/w/.git`, `gitdir: ${host}/.git\n`);
    const raw = await git(`${box.jail}/w`, ["rev-parse", "--git-dir"], {
      hardened: true,
      jail: box.jail,
    });
    equal(raw.out.trim(), `${host}/.git`, "git follows the gitfile out of the jail");
    const verdict = await check(box, ["status"], `${box.jail}/w`);
    ok(!verdict.ok);
    match(verdict.reason, /leads outside the jail/);
  });
});

Deno.test("the repository check refuses object alternates outside the jail, which git reads", async () => {
  await withBox(async (box) => {
    const host = `${box.base}/host-repo`;
    equal((await git(box.base, ["init", "-q", host])).code, 0);
    await Deno.writeTextFile(`${host}/private.txt`, "HOST-OBJECT-CONTENT\n");
    const hashed = await git(host, ["hash-object", "-w", "private.txt"]);
    const sha = hashed.out.trim();
    await Deno.writeTextFile(`${box.jail}/.git/objects/info/alternates`, `${host}/.git/objects\n`);
    const raw = await git(box.jail, ["cat-file", "-p", sha], { hardened: true, jail: box.jail });
    equal(raw.out, "HOST-OBJECT-CONTENT\n", "git read a host object through the alternate");
    const verdict = await check(box, ["cat-file", "-p", sha]);
    ok(!verdict.ok);
    match(verdict.reason, /alternate/);
  });
});

Deno.test("the repository check refuses a filter driver, which hardened git still runs on add", async () => {
  await withBox(async (box) => {
    const canary = `${box.base}/canary`;
    await setConfig(box, "filter.evil.clean", `touch ${canary}; cat`);
    await Deno.writeTextFile(`${box.jail}/.gitattributes`, "*.txt filter=evil\n");
    await Deno.writeTextFile(`${box.jail}/f.txt`, "two\n");
    await git(box.jail, ["add", "f.txt"], { hardened: true, jail: box.jail });
    ok((await Deno.lstat(canary)).isFile, "the planted filter ran under htmcp's overrides");
    await Deno.remove(canary);
    const verdict = await check(box, ["add", "f.txt"]);
    ok(!verdict.ok);
    match(verdict.reason, /names a program git would run/);
  });
});

Deno.test("the repository check refuses remote.*.uploadpack, whose first value beats -c", async () => {
  await withBox(async (box) => {
    const canary = `${box.base}/canary`;
    const other = `${box.base}/other`;
    equal((await git(box.base, ["clone", "-q", box.jail, other])).code, 0);
    await Deno.writeTextFile(`${box.base}/evil.sh`, `#!/bin/sh\ntouch ${canary}\nexit 1\n`);
    await Deno.chmod(`${box.base}/evil.sh`, 0o755);
    equal(
      (await git(other, ["config", "remote.origin.uploadpack", `${box.base}/evil.sh`])).code,
      0,
    );
    // htmcp's -c remote.origin.uploadpack=git-upload-pack, without the protocol list:
    await git(other, ["-c", "remote.origin.uploadpack=git-upload-pack", "fetch", "origin"]);
    ok((await Deno.lstat(canary)).isFile, "the repository's uploadpack won over -c");
    // A network URL, so that only the uploadpack key is left to refuse.
    equal((await git(other, ["config", "remote.origin.url", "ssh://example.invalid/x"])).code, 0);
    const verdict = await inspectGitRepository(
      { jailRoot: box.base, cwd: other, args: ["fetch", "origin"] },
      gitRepositoryReader(box.base),
    );
    ok(!verdict.ok);
    match(verdict.reason, /uploadpack/);
  });
});

Deno.test("the repository check refuses a remote whose URL is a local path or file://", async () => {
  await withBox(async (box) => {
    for (const url of ["../dst.git", "/srv/dst.git", "file:///srv/dst.git", "ext::sh -c x"]) {
      await setConfig(box, "remote.o.url", url);
      const verdict = await check(box, ["push", "o", "HEAD"]);
      ok(!verdict.ok, url);
    }
  });
});

Deno.test("the repository check refuses a bare-word address that no configured remote is named", async () => {
  await withBox(async (box) => {
    equal((await git(box.jail, ["init", "-q", "--bare", "dst.git"])).code, 0);
    for (
      const args of [["push", "dst.git", "HEAD"], ["fetch", "dst.git"], ["clone", "dst.git", "c"]]
    ) {
      const verdict = await check(box, args);
      ok(!verdict.ok, args.join(" "));
      match(verdict.reason, /names no configured remote/);
    }
    await setConfig(box, "remote.dst.git.url", "https://example.com/x.git");
    ok((await check(box, ["push", "dst.git", "HEAD"])).ok, "a configured remote of that name");
  });
});

Deno.test("the repository check refuses a work tree inside the git folder", async () => {
  await withBox(async (box) => {
    const raw = await git(box.jail, ["--work-tree=.git", "checkout", "HEAD", "--", "f.txt"], {
      hardened: true,
      jail: box.jail,
    });
    equal(raw.code, 0);
    ok((await Deno.lstat(`${box.jail}/.git/f.txt`)).isFile, "checkout wrote into .git");
    for (
      const args of [
        ["--work-tree=.git", "checkout", "HEAD", "--", "config"],
        ["--work-tree", ".git/hooks", "restore", "f.txt"],
        ["worktree", "add", ".git/x"],
        ["worktree", "add", "-b", "n", ".git/hooks"],
      ]
    ) {
      const verdict = await check(box, args);
      ok(!verdict.ok, args.join(" "));
      match(verdict.reason, /inside a git folder/);
    }
    ok((await check(box, ["worktree", "add", "../jail-side"])).ok === false, "outside the jail");
    ok((await check(box, ["worktree", "add", "side"])).ok);
  });
});

Deno.test("the repository check refuses a configuration git would read differently", async () => {
  await withBox(async (box) => {
    for (
      const text of [
        "[core]\n\tfsmonitor\0 = x\n",
        "[core\n",
        '[remote "o"]\n\turl = "unterminated\n',
        "key = outside-a-section\n",
      ]
    ) {
      await Deno.writeTextFile(`${box.jail}/.git/config`, text);
      ok(!(await check(box, ["status"])).ok, JSON.stringify(text));
    }
    await Deno.writeFile(`${box.jail}/.git/config`, new Uint8Array([0x5b, 0xff, 0x5d, 0x0a]));
    ok(!(await check(box, ["status"])).ok, "bytes that are not UTF-8");
    await Deno.writeTextFile(`${box.jail}/.git/config`, "[a]\n" + "\tb = c\n".repeat(50_000));
    ok(!(await check(box, ["status"])).ok, "a configuration too large to vet");
  });
});

Deno.test("the repository check refuses a .git/config that is a symlink to a host file, without reading it", async () => {
  await withBox(async (box) => {
    await Deno.remove(`${box.jail}/.git/config`);
    await Deno.symlink(box.secret, `${box.jail}/.git/config`);
    const verdict = await check(box, ["status"]);
    ok(!verdict.ok);
    ok(!verdict.reason.includes("TOP-SECRET"), verdict.reason);
  });
});

Deno.test("the repository check follows -C and --git-dir to the repository git will use", async () => {
  await withBox(async (box) => {
    await Deno.mkdir(`${box.jail}/inner`);
    equal((await git(`${box.jail}/inner`, ["init", "-q", "."])).code, 0);
    equal((await git(`${box.jail}/inner`, ["config", "core.fsmonitor", "x"])).code, 0);
    ok(!(await check(box, ["-C", "inner", "status"])).ok, "-C inner");
    ok(!(await check(box, ["--git-dir=inner/.git", "status"])).ok, "--git-dir");
    ok(!(await check(box, ["status"], `${box.jail}/inner`)).ok, "cwd inner");
    // The root repository is clean, but git may enter the repository nested
    // in its work tree, named by the index or not (round twelve).
    const root = await check(box, ["status"]);
    ok(
      !root.ok && /inner\/\.git\/config\) names a program/.test(root.reason),
      JSON.stringify(root),
    );
    await Deno.remove(`${box.jail}/inner`, { recursive: true });
    ok((await check(box, ["status"])).ok, "the root repository alone is clean");
  });
});

Deno.test("the repository check inspects submodules' git folders, where status runs git too", async () => {
  await withBox(async (box) => {
    const sub = `${box.base}/sub-src`;
    equal((await git(box.base, ["init", "-q", sub])).code, 0);
    await Deno.writeTextFile(`${sub}/g.txt`, "g\n");
    equal((await git(sub, ["add", "g.txt"])).code, 0);
    equal((await git(sub, ["commit", "-qm", "g"])).code, 0);
    const added = await git(box.jail, [
      "-c",
      "protocol.file.allow=always",
      "submodule",
      "add",
      "-q",
      sub,
      "sub",
    ]);
    equal(added.code, 0, added.err);
    // A submodule cloned from the network has a network URL.
    const setUrl = ["remote", "set-url", "origin", "https://example.com/s.git"];
    equal((await git(`${box.jail}/sub`, setUrl)).code, 0);
    await setConfig(box, "submodule.sub.url", "https://example.com/s.git");
    ok((await check(box, ["status"])).ok, "a clean submodule passes");
    const canary = `${box.base}/canary`;
    equal(
      (await git(`${box.jail}/sub`, ["config", "filter.x.clean", `touch ${canary}; cat`])).code,
      0,
    );
    await Deno.writeTextFile(`${box.jail}/sub/.gitattributes`, "*.txt filter=x\n");
    await Deno.writeTextFile(`${box.jail}/sub/g.txt`, "h\n"); // same size: git must hash it
    // The hardening alone now keeps git out of submodules (diff.ignoreSubmodules=all):
    await git(box.jail, ["status"], { hardened: true, jail: box.jail });
    ok(!(await Deno.lstat(canary).then(() => true, () => false)), "hardened status stays out");
    // Without it, git enters the submodule and runs its filter:
    await git(box.jail, ["status"]);
    ok((await Deno.lstat(canary)).isFile, "status in the superproject ran the submodule's filter");
    const verdict = await check(box, ["status"]);
    ok(!verdict.ok);
    match(verdict.reason, /modules|names a program/);
  });
});

Deno.test("the repository check looks for the index's submodules in the work tree core.worktree names (round ten)", async () => {
  await withBox(async (box) => {
    // The red team's layout: r/.git with core.worktree = ../../w, and w/sub
    // a nested repository (a gitlink of the index) with a filter program.
    const w = `${box.jail}/w`;
    await Deno.mkdir(`${w}/sub`, { recursive: true });
    equal((await git(w, ["init", "-q", "."])).code, 0);
    equal((await git(`${w}/sub`, ["init", "-q", "."])).code, 0);
    await Deno.writeTextFile(`${w}/sub/x`, "data\n");
    equal((await git(`${w}/sub`, ["add", "x"])).code, 0);
    equal((await git(`${w}/sub`, ["commit", "-qm", "i"])).code, 0);
    equal(
      (await git(`${w}/sub`, ["config", "filter.evil.clean", "touch /nonexistent; cat"])).code,
      0,
    );
    equal((await git(w, ["add", "sub"])).code, 0);
    equal((await git(w, ["commit", "-qm", "top"])).code, 0);
    await Deno.mkdir(`${box.jail}/r`);
    await Deno.rename(`${w}/.git`, `${box.jail}/r/.git`);
    equal((await git(`${box.jail}/r`, ["config", "core.worktree", "../../w"])).code, 0);
    const verdict = await check(box, ["status"], `${box.jail}/r`);
    ok(!verdict.ok, "the submodule under the moved work tree was inspected");
    match(verdict.reason, /names a program/);
  });
});

Deno.test("the repository check inspects a submodule .gitmodules lists with its own .git folder", async () => {
  await withBox(async (box) => {
    await Deno.mkdir(`${box.jail}/inner`);
    equal((await git(`${box.jail}/inner`, ["init", "-q", "."])).code, 0);
    equal((await git(`${box.jail}/inner`, ["config", "core.fsmonitor", "x"])).code, 0);
    await Deno.writeTextFile(`${box.jail}/.gitmodules`, '[submodule "inner"]\n\tpath = inner\n');
    ok(!(await check(box, ["status"])).ok);
  });
});

Deno.test("git with htmcp's hardening finds no repository above the jail (GIT_CEILING_DIRECTORIES)", async () => {
  await withBox(async (box) => {
    // The box's jail is a repository; a folder below it stands for a jail inside a checkout.
    const inner = `${box.jail}/inner-jail`;
    await Deno.mkdir(inner);
    const plain = await git(inner, ["rev-parse", "--git-dir"]);
    equal(plain.code, 0, "plain git finds the repository above");
    const hardened = await git(inner, ["rev-parse", "--git-dir"], { hardened: true, jail: inner });
    ok(hardened.code !== 0, `hardened git stopped at the jail: ${hardened.out}`);
  });
});

Deno.test("the repository check refuses a rebase or cherry-pick in progress whose saved state starts a program, and lets --abort end it", async () => {
  await withBox(async (box) => {
    const rebase = `${box.jail}/.git/rebase-merge`;
    await Deno.mkdir(rebase);
    await Deno.writeTextFile(`${rebase}/git-rebase-todo`, "pick abc one\nx touch /tmp/x\n");
    let verdict = await check(box, ["rebase", "--continue"]);
    ok(!verdict.ok);
    match(verdict.reason, /has an exec line, which runs a shell command/);
    // Any git command: the list is git's to act on, whatever the subcommand says.
    ok(!(await check(box, ["status"])).ok);
    for (const args of [["rebase", "--abort"], ["rebase", "--quit"]]) {
      equal((await check(box, args)).ok, true, args.join(" "));
    }
    ok(!(await check(box, ["rebase", "--abort", "--exec=x"])).ok, "--abort alone only");

    await Deno.writeTextFile(`${rebase}/git-rebase-todo`, "pick abc one\n");
    await Deno.writeTextFile(`${rebase}/strategy`, "resolve\n");
    verdict = await check(box, ["rebase", "--continue"]);
    ok(!verdict.ok);
    match(verdict.reason, /uses a merge strategy git runs as a program/);
    await Deno.writeTextFile(`${rebase}/strategy`, "ort\n");
    equal((await check(box, ["rebase", "--continue"])).ok, true, "a built-in strategy");
    await Deno.remove(rebase, { recursive: true });

    const sequencer = `${box.jail}/.git/sequencer`;
    await Deno.mkdir(sequencer);
    await Deno.writeTextFile(`${sequencer}/opts`, "[options]\n\tstrategy = octopus\n");
    verdict = await check(box, ["cherry-pick", "--continue"]);
    ok(!verdict.ok);
    match(verdict.reason, /cherry-pick or revert in progress uses a merge strategy git runs/);
    equal((await check(box, ["cherry-pick", "--abort"])).ok, true);
    await Deno.writeTextFile(`${sequencer}/opts`, "[options]\n\tstrategy = recursive\n");
    await Deno.writeTextFile(`${sequencer}/todo`, "pick abc one\nexec touch /tmp/x\n");
    ok(!(await check(box, ["cherry-pick", "--continue"])).ok);
  });
});

Deno.test("the repository check refuses pull.twohead and pull.octopus naming a strategy git runs as a program", async () => {
  await withBox(async (box) => {
    await setConfig(box, "pull.twohead", "ort resolve");
    const verdict = await check(box, ["pull", "origin"]);
    ok(!verdict.ok);
    match(verdict.reason, /pull\.twohead;/);
    await setConfig(box, "pull.twohead", "ort");
    await setConfig(box, "pull.octopus", "octopus");
    ok(!(await check(box, ["status"])).ok);
    await setConfig(box, "pull.octopus", "ours");
    equal((await check(box, ["status"])).ok, true);
  });
});

Deno.test("the repository check refuses any link in a git folder, in both modes, leading out or not (round nineteen)", async () => {
  await withBox(async (box) => {
    for (const target of [box.secret, "config", "../f.txt"]) {
      await Deno.remove(`${box.jail}/.git/COMMIT_EDITMSG`).catch(() => {});
      await Deno.symlink(target, `${box.jail}/.git/COMMIT_EDITMSG`);
      for (const sandboxed of [false, true]) {
        const verdict = await inspectGitRepository(
          { jailRoot: box.jail, cwd: box.jail, args: ["commit", "-m", "x"], sandboxed },
          gitRepositoryReader(box.jail),
        );
        ok(!verdict.ok, `${target}, sandboxed ${sandboxed}`);
        match(verdict.reason, /the git folder holds a symlink \("\.git\/COMMIT_EDITMSG"\)/);
      }
    }
    await Deno.remove(`${box.jail}/.git/COMMIT_EDITMSG`);
    equal((await check(box, ["commit", "-m", "x"])).ok, true, "without the link the commit runs");
  });
});

Deno.test("the repository check quotes no text it read from the repository's files, only their paths and key names", async () => {
  await withBox(async (box) => {
    // Were a read ever turned to a host file (a link swapped in while the
    // server reads), a refusal quoting what it read would hand it to the model.
    const secret = "SECRET-CONTENT-9f3c";
    const planted: [string, string, readonly string[]][] = [
      [".git/rebase-merge/strategy", `${secret}\n`, ["rebase", "--continue"]],
      [".git/rebase-merge/git-rebase-todo", `exec ${secret}\n`, ["rebase", "--continue"]],
      [".git/sequencer/opts", `[options]\n\tstrategy = ${secret}\n`, ["cherry-pick", "--continue"]],
      [".git/commondir", `../../${secret}\n`, ["status"]],
      [".git/objects/info/alternates", `/${secret}\n`, ["status"]],
      [".git/objects/info/alternates", `"${secret}"\n`, ["status"]],
    ];
    for (const [file, text, args] of planted) {
      await Deno.mkdir(`${box.jail}/${file.slice(0, file.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${box.jail}/${file}`, text);
      const verdict = await check(box, args);
      ok(!verdict.ok, file);
      ok(!verdict.reason.includes(secret), `${file}: ${verdict.reason}`);
      await Deno.remove(`${box.jail}/${file}`);
    }
    for (
      const [key, value] of [
        ["remote.origin.url", `/${secret}`],
        ["pull.twohead", secret],
        ["branch.main.mergeoptions", `-s ${secret}`],
        ["blame.ignoreRevsFile", `../${secret}`],
        ["commit.template", `~/${secret}`],
        // Last: git itself no longer runs in this repository after it (the config is rewritten below).
        ["core.worktree", `../../${secret}`],
      ]
    ) {
      await setConfig(box, key!, value!);
      const verdict = await check(box, ["status"]);
      ok(!verdict.ok, key);
      ok(!verdict.reason.includes(secret), `${key}: ${verdict.reason}`);
      if (key !== "core.worktree") {
        equal((await git(box.jail, ["config", "--unset", key!])).code, 0);
      }
    }
    await Deno.writeTextFile(`${box.jail}/.git/config`, `[core]\n\t${secret} x\n`);
    const malformed = await check(box, ["status"]);
    ok(!malformed.ok);
    ok(!malformed.reason.includes(secret), malformed.reason);
  });
});

Deno.test("the repository check refuses interactive.diffFilter and imap.tunnel, which name programs git runs", async () => {
  await withBox(async (box) => {
    for (const key of ["interactive.diffFilter", "imap.tunnel"]) {
      await setConfig(box, key, "touch /tmp/x; cat");
      const verdict = await check(box, ["add", "-p", "f.txt"]);
      ok(!verdict.ok, key);
      match(verdict.reason, /names a program git would run/);
      equal((await git(box.jail, ["config", "--unset", key])).code, 0);
    }
  });
});

Deno.test("the repository check refuses a nested .git it lists but cannot inspect, and walks a folder named .GIT", async () => {
  await withBox(async (box) => {
    ok((await check(box, ["status"])).ok, "the root repository alone is clean");
    await Deno.mkdir(`${box.jail}/n`);
    await Deno.symlink(`${box.jail}/missing`, `${box.jail}/n/.git`);
    const dangling = await check(box, ["status"]);
    ok(
      !dangling.ok && /n\/\.git" cannot be inspected/.test(dangling.reason),
      JSON.stringify(dangling),
    );
    await Deno.remove(`${box.jail}/n`, { recursive: true });
    // git on Linux takes .GIT for an ordinary folder: a work tree under one is searched.
    const outer = `${box.jail}/.GIT/outer`;
    await Deno.mkdir(`${outer}/inner`, { recursive: true });
    equal((await git(outer, ["init", "-q", "."])).code, 0);
    equal((await git(`${outer}/inner`, ["init", "-q", "."])).code, 0);
    equal((await git(`${outer}/inner`, ["config", "core.fsmonitor", "x"])).code, 0);
    const upper = await check(box, ["status"], outer);
    ok(!upper.ok && /names a program/.test(upper.reason), JSON.stringify(upper));
  });
});

Deno.test("the repository reader resolves through the call's budget: a chain of links cannot cost a fresh budget per value (round seventeen)", async () => {
  await withBox(async (box) => {
    // S -> d/.../d/L1, each Lk hops back up the 60-deep chain to L(k+1): hundreds of lookups.
    const down = "d/".repeat(60);
    const up = "../".repeat(60);
    await Deno.mkdir(`${box.jail}/${down}`, { recursive: true });
    await Deno.symlink(`${down}L1`, `${box.jail}/S`);
    for (let i = 1; i < 20; i++) {
      await Deno.symlink(`${up}${down}L${i + 1}`, `${box.jail}/${down}L${i}`);
    }
    await Deno.symlink(".", `${box.jail}/${down}L20`);
    const roomy = await gitRepositoryReader(box.jail).resolve(box.jail, "S");
    ok(roomy.ok, JSON.stringify(roomy));
    const { CheckBudget } = await import("../../src/jail/mod.ts");
    const tight = await gitRepositoryReader(box.jail, new CheckBudget(5_000, 30)).resolve(
      box.jail,
      "S",
    );
    ok(!tight.ok && /lookups/.test(tight.why), JSON.stringify(tight));
  });
});
