/**
 * The installed command's start cache (`scripts/_start_record.ts`,
 * `scripts/_start_cache.ts`, the script `deno task install` writes): the
 * launcher's start is reused only while every fact it looked at is
 * unchanged; anything else it consults makes the run unreusable; an entry
 * the user does not own is never read; and a reused start the server's own
 * permission set disagrees with is refused before anything is served.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type StartFact, StartRecorder } from "../../scripts/_start_record.ts";
import { encodeEntry, observeFacts, writeEntry } from "../../scripts/_start_cache.ts";
import { compileProgram } from "../../scripts/build_launcher.ts";
import { fromFileUrl } from "../../src/path/mod.ts";
import { driveOverStdio, installHere, run, writePolicy } from "./_install.ts";

Deno.test("the recorder notes each lookup, the fields read of a stat, each variable asked for and the folder, then puts Deno back", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-record-" }));
  try {
    const file = join(dir, "a.txt");
    await Deno.writeTextFile(file, "a");
    const originals = [Deno.statSync, Deno.realPath, Deno.env.get, Deno.cwd];
    const recorder = new StartRecorder();
    recorder.start();
    assert.notEqual(Deno.statSync, originals[0], "stat is wrapped while recording");
    assert.equal(Deno.statSync(file).isFile, true);
    assert.equal((await Deno.lstat(dir)).isDirectory, true);
    assert.equal(await Deno.realPath(file), file);
    assert.equal(Deno.readTextFileSync(file), "a");
    Deno.env.get("HOME");
    Deno.cwd();
    const { facts, taints } = recorder.stop();
    assert.deepEqual(taints, []);
    assert.deepEqual(
      new Set(facts.map((fact) => JSON.stringify(fact))),
      new Set([
        JSON.stringify({ kind: "stat", path: file, fields: ["isFile"] }),
        JSON.stringify({ kind: "lstat", path: dir, fields: ["isDirectory"] }),
        JSON.stringify({ kind: "realpath", path: file }),
        JSON.stringify({ kind: "content", path: file }),
        JSON.stringify({ kind: "env", name: "HOME" }),
        JSON.stringify({ kind: "cwd" }),
      ]),
    );
    assert.deepEqual([Deno.statSync, Deno.realPath, Deno.env.get, Deno.cwd], originals);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("anything else a recorded run consults taints it: a spawn, a folder listing, the whole environment", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-record-taint-" });
  try {
    const recorder = new StartRecorder();
    recorder.start();
    new Deno.Command("/bin/true");
    [...Deno.readDirSync(dir)];
    try {
      Deno.env.toObject();
    } catch {
      // Refused under the tests' env grant: asking is what counts.
    }
    const { taints } = recorder.stop();
    assert.deepEqual(taints, ["Deno.Command", "Deno.readDirSync", "Deno.env.toObject"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** `htmcp-start` built from this checkout into `dir`, as the install builds it. */
async function buildTool(dir: string): Promise<string> {
  const tool = join(dir, "htmcp-start");
  const failure = await compileProgram(
    fromFileUrl(new URL("../../scripts/htmcp_start.c", import.meta.url)),
    tool,
  );
  assert.equal(failure, null);
  return tool;
}

Deno.test("the reading changes when a fact the run read changes, and only then", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-reading-" }));
  try {
    const tool = await buildTool(dir);
    const read = join(dir, "policy.toml");
    const looked = join(dir, "audit.jsonl");
    const later = join(dir, "bin", "tool");
    await Deno.writeTextFile(read, "a");
    await Deno.writeTextFile(looked, "1");
    await Deno.mkdir(join(dir, "bin"));
    const facts: StartFact[] = [
      { kind: "content", path: read },
      // The run asked only whether it is a file: its size and times play no part.
      { kind: "stat", path: looked, fields: ["isFile"] },
      { kind: "stat", path: later, fields: ["isFile", "mode"] },
      { kind: "realpath", path: looked },
      { kind: "env", name: "HTMCP_WITNESS_TEST" },
    ];
    const seen = await observeFacts(tool, facts);
    assert.notEqual(seen, null);
    await Deno.writeTextFile(looked, "1\n2\n3\n");
    assert.equal(await observeFacts(tool, facts), seen, "a log that grew is the same fact");
    // The same size, another content: told apart by its times.
    await Deno.writeTextFile(read, "b");
    const edited = await observeFacts(tool, facts);
    assert.notEqual(edited, seen, "an edited file read");
    await Deno.writeTextFile(later, "#!/bin/sh\n", { mode: 0o755 });
    assert.notEqual(await observeFacts(tool, facts), edited, "a command that appeared on PATH");
    // A file under /proc says nothing by its times: its text is the fact.
    const limits = await observeFacts(tool, [{ kind: "content", path: "/proc/self/limits" }]);
    assert.match(limits ?? "", /^content \/proc\/self\/limits fnv=[0-9a-f]{16}$/m);
    // A variable unset, set to "" and set to a value are three facts.
    const unset = await observeFacts(tool, facts);
    Deno.env.set("HTMCP_WITNESS_TEST", "");
    const empty = await observeFacts(tool, facts);
    Deno.env.set("HTMCP_WITNESS_TEST", "x");
    const value = await observeFacts(tool, facts);
    Deno.env.delete("HTMCP_WITNESS_TEST");
    assert.equal(new Set([unset, empty, value]).size, 3);
  } finally {
    Deno.env.delete("HTMCP_WITNESS_TEST");
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("htmcp-start reuses only this user's entry, in a folder closed to others, for exactly this salt, folder and argv, while its facts hold", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-check-" }));
  try {
    const tool = await buildTool(dir);
    const cache = join(dir, "start");
    const policy = join(dir, "policy.toml");
    await Deno.writeTextFile(policy, "a");
    const check = async (salt: string, args: string[], cwd = dir) => {
      const out = await new Deno.Command(tool, {
        args: ["check", cache, salt, ...args],
        cwd,
        stdout: "piped",
        stderr: "null",
      }).output();
      return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
    };
    const args = ["serve", "--policy", "a b", 'it\'s "quoted"\nand on two lines'];
    const start = `cd -- '/a b'\nset -- 'run' 'it'"'"'s'\n`;
    const miss = await check("salt", args);
    assert.equal(miss.code, 1, "no folder yet");
    const entry = miss.stdout;
    assert.match(entry, new RegExp(`^${cache}/[0-9a-f]{16}$`));
    const facts: StartFact[] = [{ kind: "content", path: policy }, { kind: "env", name: "HOME" }];
    const reading = await observeFacts(tool, facts);
    assert.notEqual(reading, null);
    const write = async () =>
      assert(
        await writeEntry(
          entry,
          encodeEntry({ salt: "salt", cwd: dir, args, facts, reading: reading!, start }),
        ),
      );
    await write();
    assert.deepEqual(await check("salt", args), { code: 0, stdout: start });
    // Another salt (launcher), argv or folder is another start.
    assert.equal((await check("other", args)).code, 1);
    assert.equal((await check("salt", [...args, "x"])).code, 1);
    assert.equal((await check("salt", args.slice(0, 3))).code, 1);
    assert.equal((await check("salt", args, cache)).code, 1);
    // A folder others may enter or write, an entry not this user's, group-
    // writable or a symlink: never read.
    await Deno.chmod(cache, 0o755);
    assert.equal((await check("salt", args)).code, 1, "a folder open to others");
    await Deno.chmod(cache, 0o700);
    await Deno.chmod(entry, 0o620);
    assert.equal((await check("salt", args)).code, 1, "a group-writable entry");
    await Deno.chmod(entry, 0o600);
    await Deno.chown(entry, 65534, 65534);
    assert.equal((await check("salt", args)).code, 1, "another user's entry");
    await Deno.chown(entry, 0, 0);
    await Deno.rename(entry, `${dir}/real`);
    await Deno.symlink(`${dir}/real`, entry);
    assert.equal((await check("salt", args)).code, 1, "a symlink");
    await Deno.remove(entry);
    await write();
    assert.equal((await check("salt", args)).code, 0);
    // A fact that changed: the start is not reused.
    await Deno.writeTextFile(policy, "b");
    assert.equal((await check("salt", args)).code, 1, "an edited policy");
    // A malformed entry is a miss, never a crash or a partial start.
    await Deno.writeTextFile(entry, "htmcp-start 1\0salt\0", { mode: 0o600 });
    assert.deepEqual((await check("salt", args)).code, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs the installed command with no client: it starts, reads end of input at once, and stops. */
async function startOnce(env: Record<string, string>, policy: string, cwd: string) {
  return await run("htmcp", ["serve", "--policy", policy], env, cwd);
}

Deno.test("the installed htmcp reuses its launcher's start while every fact behind it holds, and recomputes when one changes", async (t) => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-start-cache-" }));
  try {
    const { env, lib } = await installHere(dir);
    const policy = await writePolicy(dir);
    const cache = join(lib, "start");
    const launcher = join(lib, "dist", "scripts", "launch.js");
    const launcherText = await Deno.readTextFile(launcher);
    const entries = () => [...Deno.readDirSync(cache)].filter((e) => e.isFile).map((e) => e.name);
    /** While it is broken, only a start that never runs the launcher can succeed. */
    const withBrokenLauncher = async <T>(fn: () => Promise<T>) => {
      await Deno.writeTextFile(launcher, "throw new Error('the launcher ran');\n");
      try {
        return await fn();
      } finally {
        await Deno.writeTextFile(launcher, launcherText);
      }
    };

    await t.step(
      "the first start writes one entry, mode 0600, in a folder of mode 0700, and a changed fact replaces it",
      async () => {
        const first = await startOnce(env, policy, dir);
        assert.equal(first.code, 0, first.stderr);
        assert.match(first.stderr, /permission layer: flags \(no broader than the policy's set\)/);
        assert.equal(entries().length, 1);
        // That start created the audit log, which its launcher had seen
        // missing: a fact changed, so the second start runs the launcher again.
        const second = await withBrokenLauncher(() => startOnce(env, policy, dir));
        assert.equal(second.code, 1, "a start whose facts changed did not run the launcher");
        assert.equal((await startOnce(env, policy, dir)).code, 0);
        assert.equal(entries().length, 1, "the same start's entry is replaced, not added");
        assert.equal((await Deno.stat(cache)).mode! & 0o777, 0o700);
        assert.equal((await Deno.stat(join(cache, entries()[0]!))).mode! & 0o777, 0o600);
      },
    );

    await t.step(
      "the next start is the entry's, without the launcher, and the SDK client drives it",
      async () => {
        const stderr = await withBrokenLauncher(() =>
          driveOverStdio("htmcp", ["serve", "--policy", policy], env, dir)
        );
        assert.match(stderr, /permission layer: flags \(no broader than the policy's set\)/);
        // A broken launcher is noticed as soon as a start needs it.
        await Deno.writeTextFile(launcher, "throw new Error('the launcher ran');\n");
        try {
          const other = await run("htmcp", ["serve", "--policy", policy], env, join(dir, "jail"));
          assert.equal(other.code, 1, "another folder is another start");
          assert.match(other.stderr, /changed since it was installed/);
        } finally {
          await Deno.writeTextFile(launcher, launcherText);
        }
      },
    );

    await t.step("an edited policy is started afresh, with the flags it now needs", async () => {
      await Deno.writeTextFile(
        policy,
        (await Deno.readTextFile(policy)).replace(`["cat", "echo"]`, `["cat", "echo", "ls"]`),
      );
      const refused = await withBrokenLauncher(() => startOnce(env, policy, dir));
      assert.equal(refused.code, 1, "the edit sent the start to the launcher");
      const started = await startOnce(env, policy, dir);
      assert.equal(started.code, 0, started.stderr);
      const entry = await Deno.readTextFile(join(cache, entries()[0]!));
      assert.match(entry, /--allow-run=[^']*\/ls[,']/);
      const again = await withBrokenLauncher(() => startOnce(env, policy, dir));
      assert.equal(again.code, 0, again.stderr);
    });

    await t.step(
      "a command that appears earlier on PATH is started afresh, and runs from there",
      async () => {
        const early = join(dir, "early");
        await Deno.mkdir(early);
        const pathEnv = { ...env, PATH: `${early}:${env.PATH}` };
        assert.equal((await startOnce(pathEnv, policy, dir)).code, 0);
        assert.equal((await withBrokenLauncher(() => startOnce(pathEnv, policy, dir))).code, 0);
        await Deno.copyFile("/usr/bin/echo", join(early, "echo"));
        await Deno.chmod(join(early, "echo"), 0o755);
        assert.equal((await withBrokenLauncher(() => startOnce(pathEnv, policy, dir))).code, 1);
        const started = await startOnce(pathEnv, policy, dir);
        assert.equal(started.code, 0, started.stderr);
        const texts = entries().map((name) => Deno.readTextFileSync(join(cache, name)));
        assert(
          texts.some((text) => text.includes(`${early}/echo`)),
          "the new entry runs early/echo",
        );
      },
    );

    await t.step(
      "an entry the user does not own, or a symlink in its place, is never read",
      async () => {
        assert.equal((await startOnce(env, policy, dir)).code, 0);
        for (const name of entries()) await Deno.chown(join(cache, name), 65534, 65534);
        const foreign = await withBrokenLauncher(() => startOnce(env, policy, dir));
        assert.equal(foreign.code, 1, "an entry owned by another user was read");
        for (const name of entries()) await Deno.remove(join(cache, name));
        assert.equal((await startOnce(env, policy, dir)).code, 0);
        const [written] = entries();
        const entry = join(cache, written!);
        await Deno.rename(entry, `${dir}/entry`);
        await Deno.symlink(`${dir}/entry`, entry);
        const linked = await withBrokenLauncher(() => startOnce(env, policy, dir));
        assert.equal(linked.code, 1, "a symlinked entry was read");
        await Deno.remove(entry);
        await Deno.rename(`${dir}/entry`, entry);
      },
    );

    await t.step(
      "a server argument that looks like a permission flag (serve --allow-unconfined) is not taken for one: the start is reused",
      async () => {
        // The script passes the server the permission flags it started deno
        // with; it once also passed the server's own --allow-unconfined, so
        // every reused start of such a server was refused as changed.
        const none = join(dir, "policy-none.toml");
        await Deno.writeTextFile(
          none,
          (await Deno.readTextFile(policy)).replace("log/audit.jsonl", "log/audit-none.jsonl") +
            `\n[sandbox]\nmode = "none"\naccept_path_check_only = true\n`,
        );
        const args = ["serve", "--policy", none, "--allow-unconfined"];
        const first = await run("htmcp", args, env, dir);
        assert.equal(first.code, 0, first.stderr);
        // The first start created its audit log: the next runs the launcher again.
        assert.equal((await run("htmcp", args, env, dir)).code, 0);
        const reused = await withBrokenLauncher(() => run("htmcp", args, env, dir));
        assert.equal(reused.code, 0, reused.stderr);
        assert.match(reused.stderr, /permission layer: flags \(no broader than the policy's set\)/);
      },
    );

    await t.step(
      "several clients starting at once, the cache empty, each get a server through the SDK client, and one entry is left",
      async () => {
        await Deno.remove(cache, { recursive: true });
        // Three client windows at once: three launchers write the same entry
        // (each a new file renamed over the last); none reads half of one.
        const stderrs = await Promise.all(
          [1, 2, 3].map(() => driveOverStdio("htmcp", ["serve", "--policy", policy], env, dir)),
        );
        for (const stderr of stderrs) {
          assert.match(stderr, /permission layer: flags \(no broader than the policy's set\)/);
        }
        assert.equal(entries().length, 1);
        assert.deepEqual(
          [...Deno.readDirSync(cache)].filter((e) => e.name.startsWith(".tmp-")),
          [],
          "a temporary file was left",
        );
        const again = await withBrokenLauncher(() => startOnce(env, policy, dir));
        assert.equal(again.code, 0, again.stderr);
      },
    );

    await t.step(
      "a reused start whose flags are not exactly the server's own set is refused before anything opens",
      async () => {
        assert.equal((await withBrokenLauncher(() => startOnce(env, policy, dir))).code, 0);
        const [name] = entries();
        const path = join(cache, name!);
        const text = await Deno.readTextFile(path);
        const audit = join(dir, "log", "audit.jsonl");
        const records = async () => (await Deno.readTextFile(audit)).trim().split("\n").length;
        const extra = join(dir, "extra");
        const cases: [string, (entry: string) => string, RegExp][] = [
          // What a stale entry would be after a policy edit raced the check:
          // one read grant more, on a path no sentinel probe would try.
          [
            "one grant more",
            (e) => e.replace("--allow-read=", `--allow-read=${extra},`),
            /started with --allow-read=/,
          ],
          [
            "a wider grant",
            (e) => e.replace("--allow-read=", "--allow-read=/etc,"),
            /broader: read \/etc/,
          ],
          [
            "one grant fewer",
            (e) => e.replace(/--allow-run=[^']*/, "--allow-run=/usr/bin/cat"),
            /missing: run /,
          ],
        ];
        for (const [label, edit, said] of cases) {
          await Deno.writeTextFile(path, edit(text), { mode: 0o600 });
          const before = await records();
          const refused = await withBrokenLauncher(() => startOnce(env, policy, dir));
          assert.equal(refused.code, 1, `${label}: ${refused.stderr}`);
          assert.match(
            refused.stderr,
            /the cached start's permission flags are not the policy's set now/,
          );
          assert.match(refused.stderr, said, label);
          assert(refused.stderr.includes(`remove ${cache}`), refused.stderr);
          assert.equal(
            await records(),
            before,
            `${label}: the refused start wrote to the audit log`,
          );
        }
        await Deno.writeTextFile(path, text, { mode: 0o600 });
        assert.equal((await withBrokenLauncher(() => startOnce(env, policy, dir))).code, 0);
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
