import { deepEqual, equal, ok } from "node:assert/strict";
import { looksLikePath, pathArgumentCandidates } from "../../src/policy/mod.ts";

const CASES: readonly (readonly [readonly string[], readonly string[]])[] = [
  [["cat", "notes.txt"], ["notes.txt"]],
  [["cat", "/etc/passwd"], ["/etc/passwd"]],
  [["grep", "--file=/etc/passwd", "x"], ["--file=/etc/passwd", "/etc/passwd", "x"]],
  [["sort", "-o/etc/x"], ["-o/etc/x", "/etc/x"]],
  [["sort", "-uo/etc/x"], ["-uo/etc/x", "o/etc/x", "/etc/x"]],
  [["ls", "-la"], ["-la", "a"]],
  // A value attached to an option letter, without a slash: `date -frl` reads the file `rl`.
  [["date", "-frl"], ["-frl", "rl", "l"]],
  [["dd", "if=/etc/passwd", "of=x"], ["if=/etc/passwd", "/etc/passwd", "of=x", "x"]],
  [["x", "--a=b=/c"], ["--a=b=/c", "b=/c", "/c"]],
  [["curl", "@/etc/passwd"], ["@/etc/passwd", "/etc/passwd"]],
  [["git", "clone", "file:///etc/x"], ["clone", "file:///etc/x", "/etc/x"]],
  [["git", "clone", "file://localhost/etc/x"], ["clone", "file://localhost/etc/x", "/etc/x"]],
  [["git", "clone", "https://example.com/r"], ["clone", "https://example.com/r"]],
  [["echo", ""], []],
  [["cat", "a", "a"], ["a"]],
  [["tar", "-C/", "-tf", "a"], ["-C/", "/", "-tf", "f", "a"]],
];

for (const [argv, expected] of CASES) {
  Deno.test(`pathArgumentCandidates() collects ${JSON.stringify(expected)} from ${JSON.stringify(argv)}`, () => {
    deepEqual(pathArgumentCandidates(argv), { ok: true, candidates: expected });
  });
}

Deno.test("pathArgumentCandidates() skips the command word, which the policy already resolved", () => {
  deepEqual(pathArgumentCandidates(["/usr/bin/ls"]), { ok: true, candidates: [] });
});

Deno.test("looksLikePath() is true for absolute, ~, slash, .. and . and false for bare words", () => {
  for (const text of ["/x", "~", "~/x", "a/b", "..", "../x", "a..b", "."]) {
    ok(looksLikePath(text), text);
  }
  for (const text of ["x", "-la", "notes.txt", "--flag", "a=b"]) {
    equal(looksLikePath(text), false, text);
  }
});

Deno.test("pathArgumentCandidates() checks a file: URL's path decoded too, and refuses one with a pattern (red team: curl)", () => {
  deepEqual(pathArgumentCandidates(["curl", "file:///j/%2e%2e/s"]), {
    ok: true,
    candidates: ["file:///j/%2e%2e/s", "/j/%2e%2e/s", "/j/../s"],
  });
  for (const url of ["file:///j/{..,x}/s", "file:///j/[1-2]/s", "file:///j/%zz/s"]) {
    const result = pathArgumentCandidates(["curl", url]);
    ok(!result.ok, url);
  }
});
