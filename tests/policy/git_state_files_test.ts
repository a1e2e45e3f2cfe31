import { deepEqual, equal, ok } from "node:assert/strict";
import {
  applyOptWords,
  indexEntryNames,
  isCleanTreePath,
  mergeRrPaths,
  unsafeApplyOption,
} from "../../src/policy/git_state_files.ts";

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: cwd },
    stdout: "null",
    stderr: "piped",
  }).output();
  equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

/** A repository with files a, dir/b and dir/sub/c staged, made by git with `init` options. */
async function indexOf(init: string[], after: string[][] = []): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-gitindex-" });
  try {
    await git(dir, "init", "-q", ...init, ".");
    await Deno.mkdir(`${dir}/dir/sub`, { recursive: true });
    for (const name of ["a", "dir/b", "dir/sub/c", "n"]) {
      await Deno.writeTextFile(`${dir}/${name}`, name);
    }
    await git(dir, "add", "a", "dir");
    for (const args of after) await git(dir, ...args);
    return await Deno.readFile(`${dir}/.git/index`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("indexEntryNames() reads git's own indexes: versions 2, 3 and 4, SHA-1 and SHA-256", async () => {
  const names = ["a", "dir/b", "dir/sub/c"];
  deepEqual(indexEntryNames(await indexOf([]), 20)?.names, names);
  // An intent-to-add entry carries the extended flags: git writes version 3.
  const v3 = await indexOf([], [["add", "-N", "n"]]);
  equal(v3[7], 3, "git wrote version 3");
  deepEqual(indexEntryNames(v3, 20)?.names, [...names, "n"]);
  deepEqual(
    indexEntryNames(await indexOf([], [["update-index", "--index-version", "4"]]), 20)?.names,
    names,
  );
  deepEqual(indexEntryNames(await indexOf(["--object-format=sha256"]), 32)?.names, names);
  const split = await indexOf([], [["update-index", "--split-index"]]);
  equal(indexEntryNames(split, 20)?.split, true);
});

Deno.test("indexEntryNames() reads an entry renamed to ../ as git would, and refuses bytes that are no index", async () => {
  const bytes = await indexOf([]);
  // "dir/b" is five bytes: the same length keeps the layout, as the red team's edit did.
  const at = new TextDecoder("latin1").decode(bytes).indexOf("dir/b");
  bytes.set(new TextEncoder().encode("../xy"), at);
  const read = indexEntryNames(bytes, 20);
  deepEqual(read?.names, ["a", "../xy", "dir/sub/c"]);
  ok(!read!.names.every(isCleanTreePath));
  equal(indexEntryNames(new TextEncoder().encode("DIRC not an index at all, really"), 20), null);
  equal(indexEntryNames(bytes.subarray(0, 60), 20), null);
});

Deno.test("indexEntryNames() refuses a name whose length in the flags differs from its NUL (git reads by the flags)", async () => {
  const bytes = await indexOf([]);
  // Entry 1 is "a": its flags are the two bytes before the name; its name becomes "..A".
  const at = 12 + 40 + 20 + 2;
  equal(String.fromCharCode(bytes[at]!), "a");
  const first = bytes.slice();
  // The red team's index: "..A" up to the NUL, length 2 in the flags, which git reads as "..".
  first.set(new TextEncoder().encode("..A"), at);
  first[at + 3] = 0;
  new DataView(first.buffer).setUint16(at - 2, 2);
  equal(indexEntryNames(first, 20), null);
  // The same name with its true length is read, and is clean.
  new DataView(first.buffer).setUint16(at - 2, 3);
  ok(indexEntryNames(first, 20)?.names.includes("..A"));
});

Deno.test("isCleanTreePath() takes what git writes and nothing that leaves the work tree", () => {
  for (const path of ["a", "dir/b", "dir/", ".gitignore", "a/.gitkeep", "x..y"]) {
    ok(isCleanTreePath(path), path);
  }
  for (
    const path of ["", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", ".git/config", "a/.GIT/x"]
  ) {
    ok(!isCleanTreePath(path), path);
  }
});

Deno.test("mergeRrPaths() reads MERGE_RR's records and nothing else", () => {
  const id = "0123456789abcdef0123456789abcdef01234567";
  deepEqual(mergeRrPaths(`${id}\tf.txt\0${id}\tdir/g\0`), ["f.txt", "dir/g"]);
  deepEqual(mergeRrPaths(""), []);
  deepEqual(mergeRrPaths(`${id}\t/tmp/secret\0`), ["/tmp/secret"]);
  // A rerere variant and upper-case hex, as git's read_rr takes them.
  deepEqual(mergeRrPaths(`${id}.2\tf.txt\0${id.toUpperCase()}\tg\0`), ["f.txt", "g"]);
  equal(mergeRrPaths(`${id} f.txt\0`), null);
  equal(mergeRrPaths(`${id}\tf.txt`), null);
});

Deno.test("applyOptWords() and unsafeApplyOption() pass what git am saves and refuse any other option", () => {
  deepEqual(applyOptWords(" '--whitespace=fix' '-p2' '--directory=sub'\n"), [
    "--whitespace=fix",
    "-p2",
    "--directory=sub",
  ]);
  deepEqual(applyOptWords(`'--exclude=it'\\''s'`), ["--exclude=it's"]);
  equal(applyOptWords("--whitespace=fix"), null);
  equal(unsafeApplyOption(["--whitespace=fix", "-C3", "--reject"]), null);
  equal(
    unsafeApplyOption(["--build-fake-ancestor=/tmp/clobber"]),
    "--build-fake-ancestor=/tmp/clobber",
  );
  equal(unsafeApplyOption(["--directory=../../x"]), "--directory=../../x");
  equal(unsafeApplyOption(["--unsafe-paths"]), "--unsafe-paths");
});

Deno.test("indexEntryNames() counts a gitlink by its type bits, as git's S_ISGITLINK does (mode 0160644 too)", async () => {
  const commit = "0123456789012345678901234567890123456789";
  const bytes = await indexOf([], [[
    "update-index",
    "--add",
    "--cacheinfo",
    `160000,${commit},sub`,
  ]]);
  deepEqual(indexEntryNames(bytes, 20)?.gitlinks, ["sub"]);
  // Entries are sorted: a, dir/b, dir/sub/c, sub. The mode is 24 bytes into an entry.
  const at = new TextDecoder("latin1").decode(bytes).indexOf("sub\0") - 62;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  equal(view.getUint32(at + 24), 0o160000, "found the gitlink's mode");
  // The red team's index (round twelve): git still reads it as a gitlink.
  view.setUint32(at + 24, 0o160644);
  deepEqual(indexEntryNames(bytes, 20)?.gitlinks, ["sub"]);
});
