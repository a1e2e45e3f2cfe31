import { deepEqual, equal, match, ok } from "node:assert/strict";
import { planPathChecks } from "../../src/policy/mod.ts";
import { baseFolders, readCopyOperands } from "../../src/policy/path_model/mod.ts";

function plan(argv: readonly string[], sandboxed = false) {
  const result = planPathChecks(argv, [argv[0] as string], sandboxed);
  ok(result.ok, JSON.stringify(result));
  return result.plan;
}

function refusal(argv: readonly string[], sandboxed = false): string {
  const result = planPathChecks(argv, [argv[0] as string], sandboxed);
  ok(!result.ok, `${argv.join(" ")} was not refused`);
  equal(result.code, "POLICY_DENIED");
  return result.reason;
}

const FOLDERS: readonly (readonly [readonly string[], readonly string[]])[] = [
  [["tar", "-C", "..", "-cf", "t.tar", "x"], [".."]],
  [["tar", "-C..", "-cf", "t.tar", "x"], [".."]],
  [["tar", "--directory=a", "--dir", "b", "-tf", "t"], ["a", "b"]],
  [["tar", "-xvC", "d", "-f", "t"], ["d"]],
  // Old style: f takes a.tar, C takes d, in turn.
  [["tar", "cfC", "a.tar", "d", "x"], ["d"]],
  // getopt: f takes the rest of the cluster ("C"), so there is no folder change.
  [["tar", "-fC", "x"], []],
  [["tar", "-f", "-C", "x"], []],
  [["git", "-C", "..", "--git-dir=g", "--work-tree", "w", "status"], ["..", "g", "w"]],
  // After the subcommand, -C is git diff's copy detection, not a folder.
  [["git", "diff", "-C", "x"], []],
  [["git", "-c", "a.b=-C", "log"], []],
  [["make", "-C", "sub", "-f", "m"], ["sub"]],
  [["make", "--directory=sub"], ["sub"]],
  [["make", "-kCsub"], ["sub"]],
  [["ls", "--directory", "x"], []],
  [["grep", "-C", "3", "x", "f"], []],
];

for (const [argv, expected] of FOLDERS) {
  Deno.test(`baseFolders() reads ${JSON.stringify(expected)} from ${JSON.stringify(argv)}`, () => {
    const found = baseFolders(argv, argv[0] as string);
    ok(found.ok);
    deepEqual(found.folders.map((change) => change.text), expected);
  });
}

Deno.test("baseFolders() reports a folder-changing flag of a tool it has no model of", () => {
  for (
    const argv of [
      ["ninja", "-C", "build"],
      ["cargo", "--cwd=x"],
      ["npm", "--root", "x"],
      ["meson", "--chdir=x"],
      ["install", "--target-directory=d", "f"],
    ]
  ) {
    const found = baseFolders(argv, argv[0] as string);
    ok(!found.ok, argv.join(" "));
  }
  ok(baseFolders(["unknown", "-v", "file"], "unknown").ok);
});

const JOINS: readonly (readonly [readonly string[], readonly string[]])[] = [
  [["cp", "--parents", "../outside/x", ".."], ["../../outside/x"]],
  [["cp", "-t", "d", "a/b", "c/"], ["d/b", "d/c"]],
  [["cp", "-td", "a"], ["d/a"]],
  [["cp", "--target-directory=d", "a"], ["d/a"]],
  [["cp", "--target", "d", "a"], ["d/a"]],
  [["cp", "--par", "-t", "d", "../x"], ["d/../x"]],
  [["cp", "a", "b", "dir"], ["dir/a", "dir/b"]],
  [["cp", "-S", ".bak", "a", "dir"], ["dir/a"]],
  [["cp", "--", "-t", "dir"], ["dir/-t"]],
  [["mv", "-t", "d", "x"], ["d/x"]],
  [["cp", "only"], []],
];

for (const [argv, expected] of JOINS) {
  Deno.test(`readCopyOperands() composes ${JSON.stringify(expected)} from ${JSON.stringify(argv)}`, () => {
    const joins = readCopyOperands(argv, argv[0] as "cp" | "mv").joins;
    deepEqual(joins, expected);
  });
}

Deno.test("planPathChecks() checks the joins and leaves a folder value out of the checks from its own folder", () => {
  const copy = plan(["cp", "--parents", "../outside/x", ".."]);
  ok(copy.candidates.includes("../../outside/x"));
  const tar = plan(["tar", "-C", "..", "-tf", "t.tar"]);
  deepEqual(tar.bases, [{ text: "..", kind: "chdir" }]);
  ok(!tar.candidates.includes(".."), "the folder value is checked as a folder change");
  ok(tar.candidates.includes("t.tar"));
  const attached = plan(["tar", "--directory=..", "-tf", "t.tar"]);
  ok(!attached.candidates.includes(".."));
});

const LINK_MAKERS: readonly (readonly string[])[] = [
  ["cp", "-s", "a", "b"],
  ["cp", "--symbolic-link", "a", "b"],
  ["cp", "--sym", "a", "b"],
  ["cp", "-l", "a", "b"],
  ["cp", "--link", "a", "b"],
  ["cp", "--l", "a", "b"],
  ["cp", "-rlL", "a", "b"],
  ["cp", "-al", "a", "b"],
  ["ln", "-s", "a", "b"],
  ["link", "a", "b"],
];

for (const argv of LINK_MAKERS) {
  Deno.test(`planPathChecks() refuses the link-making ${JSON.stringify(argv)}`, () => {
    match(refusal(argv), /link/);
  });
}

Deno.test("planPathChecks() does not mistake a value for a link flag: cp -S .sl keeps suffix text", () => {
  plan(["cp", "-S", ".sl", "a", "b"]);
  plan(["cp", "--suffix=-l", "a", "b"]);
  plan(["cp", "-t", "sl", "a"]);
});

Deno.test("planPathChecks() refuses tar extraction without the sandbox and allows it with", () => {
  for (
    const argv of [["tar", "-xf", "t"], ["tar", "xf", "t"], ["tar", "--extract", "-f", "t"], [
      "tar",
      "--get",
      "-f",
      "t",
    ]]
  ) {
    match(refusal(argv), /extract/);
    plan(argv, true);
  }
  plan(["tar", "-tf", "t"]);
  plan(["tar", "--exclude=x", "-cf", "t", "d"]);
});

const WALKERS: readonly (readonly [readonly string[], boolean])[] = [
  [["grep", "-R", "x", "d"], true],
  [["grep", "-r", "x", "d"], false],
  [["grep", "--dereference-recursive", "x"], true],
  [["diff", "-r", "a", "b"], true],
  [["diff", "a", "b"], false],
  [["cp", "-r", "a", "b"], true],
  [["cp", "-rL", "a", "b"], true],
  [["cp", "a", "b"], false],
  [["find", "-L", "."], true],
  [["find", ".", "-follow"], true],
  [["find", "."], false],
  [["du", "-aL", "."], true],
  [["ls", "-RL"], true],
  [["ls", "-la"], false],
  [["tar", "-chf", "t", "d"], true],
  [["tar", "chf", "t", "d"], true],
  [["tar", "-cf", "t", "d"], false],
  [["gzip", "-rc", "d"], true],
  [["gzip", "--recursive", "-f", "d"], true],
  [["gunzip", "-rf", "d"], true],
  [["zcat", "-r", "d"], true],
  [["gzip", "-c", "f"], false],
];

for (const [argv, walks] of WALKERS) {
  Deno.test(`planPathChecks() ${walks ? "walks" : "does not walk"} the trees of ${JSON.stringify(argv)}`, () => {
    equal(plan(argv).walks.length > 0, walks);
  });
}

Deno.test("planPathChecks() walks the cwd for a tool that defaults to it", () => {
  ok(plan(["grep", "-R", "x"]).walks.includes("."));
  ok(!plan(["diff", "-r", "a", "b"]).walks.includes("."));
});

Deno.test("planPathChecks() uses the real file's name when the allowlisted name has no model", () => {
  const result = planPathChecks(["mytar", "-C", "..", "-cf", "t", "x"], ["mytar", "tar"], false);
  ok(result.ok);
  deepEqual(result.plan.bases, [{ text: "..", kind: "chdir" }]);
});

Deno.test("planPathChecks() models the other tools with a guard: gtar/bsdtar folders, rg -L, rsync dest-relative folders", () => {
  deepEqual(plan(["gtar", "-C", "d", "-tf", "t"]).bases, [{ text: "d", kind: "chdir" }]);
  match(refusal(["bsdtar", "-xf", "t"]), /extract/);
  ok(plan(["rg", "-L", "x"]).walks.includes("."));
  equal(plan(["rg", "x"]).walks.length, 0);
  match(refusal(["rsync", "-a", "--link-dest=../old", "src/", "dst/"]), /--link-dest/);
  ok(plan(["rsync", "-rL", "src/", "dst/"]).walks.length > 0);
  equal(plan(["zip", "-r", "z.zip", "d"]).walks.includes("."), false);
  plan(["man", "-C", "conf", "ls"]);
});

Deno.test("planPathChecks() refuses reading the paths to open from a file without the sandbox", () => {
  for (
    const argv of [
      ["tar", "-cf", "t", "-T", "list"],
      ["tar", "cTf", "list", "t"],
      ["tar", "--files-from=list", "-cf", "t"],
      ["du", "--files0-from=list"],
      ["wc", "--files0-from", "list"],
      ["rsync", "--files-from=list", "a", "b"],
      ["find", "-files0-from", "list"],
    ]
  ) {
    match(refusal(argv), /read the paths it opens from a file/, argv.join(" "));
    plan(argv, true);
  }
  plan(["tar", "-cf", "t", "d"]);
});

Deno.test("readCopyOperands() lists the sources a copy reproduces links of", () => {
  const sources = (argv: readonly string[]) =>
    readCopyOperands(argv, argv[0] as "cp" | "mv").linkCopySources;
  deepEqual(sources(["cp", "-r", "a", "b", "dst"]), ["a", "b"]);
  deepEqual(sources(["cp", "-a", "a", "dst"]), ["a"]);
  deepEqual(sources(["cp", "-P", "a", "dst"]), ["a"]);
  deepEqual(sources(["cp", "--no-dereference", "a", "dst"]), ["a"]);
  deepEqual(sources(["cp", "-rL", "a", "dst"]), []);
  deepEqual(sources(["cp", "-rH", "a", "dst"]), []);
  deepEqual(sources(["cp", "a", "dst"]), []);
  deepEqual(sources(["mv", "a", "dst"]), []);
});

Deno.test("planPathChecks() refuses cpio and unzip extraction without the sandbox, and allows listing", () => {
  for (
    const argv of [
      ["cpio", "-i"],
      ["cpio", "-idv"],
      ["cpio", "--extract"],
      ["unzip", "a.zip"],
      ["unzip", "-o", "a.zip"],
      ["unzip", "-:", "a.zip"],
      ["unzip", "-d", "out", "a.zip"],
      ["unzip", "a.zip", "-l"],
    ]
  ) {
    match(refusal(argv), /extracts whatever names and links the archive holds/);
    plan(argv, true);
  }
  for (
    const argv of [["unzip", "-l", "a.zip"], ["unzip", "-qt", "a.zip"], ["unzip", "-p", "a.zip"]]
  ) {
    plan(argv);
  }
  plan(["cpio", "-t"]);
});

Deno.test("planPathChecks() refuses zip -@, cpio -o/-p and file -f, which read the names they open from a list", () => {
  for (
    const argv of [
      ["zip", "-@", "o.zip"],
      ["zip", "-r@", "o.zip"],
      ["zip", "--names-stdin", "o.zip"],
      ["cpio", "-o"],
      ["cpio", "-pd", "dest"],
      ["cpio", "--create"],
      ["file", "-f", "names"],
      ["file", "--files-from=names"],
    ]
  ) {
    match(refusal(argv), /read the paths it opens from a file/);
    plan(argv, true);
  }
  plan(["zip", "-r", "o.zip", "d"]);
  plan(["file", "a.txt"]);
});

Deno.test("planPathChecks() refuses the file lists of xz, zstd, curl, mktemp and binutils' @FILE without the sandbox (red team)", () => {
  for (
    const argv of [
      ["xz", "-dcf", "--files=list"],
      ["zstd", "-dcf", "--filelist=list"],
      ["curl", "-K", "cfg"],
      ["curl", "-F", "a=<f", "http://127.0.0.1/"],
      ["curl", "--data-urlencode", "a@f", "http://127.0.0.1/"],
      ["curl", "--output-dir", "../..", "-o", "x", "http://127.0.0.1/"],
      ["mktemp", "-p", "../..", "x/mkXXXXXX"],
      ["mktemp", "--tmpdir=..", "x/mkXXXXXX"],
      ["strings", "@list"],
      ["nm", "@list"],
    ]
  ) {
    match(refusal(argv), /read the paths it opens from a file/);
    plan(argv, true);
  }
  plan(["curl", "-o", "x", "http://127.0.0.1/"]);
  plan(["strings", "a.bin"]);
  plan(["mktemp", "x/mkXXXXXX"]);
});

Deno.test("planPathChecks() refuses split and csplit without the sandbox, and checks the names gzip tries after a missing one (red team)", () => {
  for (
    const argv of [["split", "in"], ["split", "-l", "10", "in", "part-"], ["csplit", "in", "1"]]
  ) {
    match(refusal(argv), /adding a suffix to a prefix/);
    plan(argv, true);
  }
  for (const argv of [["zcat", "-f", "s"], ["gzip", "-dc", "s"], ["gunzip", "s"]]) {
    const candidates = plan(argv).candidates;
    for (const name of ["s.gz", "s.z", "s-gz", "s.Z", "s.tgz"]) {
      ok(candidates.includes(name), `${argv.join(" ")}: ${name}`);
    }
  }
});

Deno.test("planPathChecks() refuses @FILE for binutils under their target-prefixed names too (red team)", () => {
  for (
    const tool of [
      "x86_64-linux-gnu-strings",
      "aarch64-linux-gnu-nm",
      "ld.bfd",
      "ld.gold",
      "elfedit",
      "gprof",
    ]
  ) {
    const result = planPathChecks([tool, "@list"], [tool], false);
    ok(!result.ok, tool);
  }
  plan(["x86_64-linux-gnu-strings", "a.bin"]);
});
