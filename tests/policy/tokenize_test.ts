import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { tokenize } from "../../src/policy/mod.ts";

const SPLITS: readonly (readonly [string, readonly string[]])[] = [
  ["ls -la", ["ls", "-la"]],
  ["  ls   -la  ", ["ls", "-la"]],
  ["ls\t-la", ["ls", "-la"]],
  [`grep "a b" file`, ["grep", "a b", "file"]],
  [`grep 'a b' file`, ["grep", "a b", "file"]],
  [`echo a\\ b`, ["echo", "a b"]],
  [`echo "a\\"b"`, ["echo", 'a"b']],
  [`echo "a\\\\b"`, ["echo", "a\\b"]],
  [`echo "a\\nb"`, ["echo", "a\\nb"]],
  [`echo 'a\\nb'`, ["echo", "a\\nb"]],
  [`echo 'it'"'"'s'`, ["echo", "it's"]],
  [`echo a"b"'c'd`, ["echo", "abcd"]],
  [`echo ''`, ["echo", ""]],
  [`echo "" x`, ["echo", "", "x"]],
  [`grep 'a|b' f`, ["grep", "a|b", "f"]],
  [`grep "a;b" f`, ["grep", "a;b", "f"]],
  [`echo 'a > b < c & d'`, ["echo", "a > b < c & d"]],
  [`echo '*.txt' "?" '[x]' '{a,b}' '!' '#x' '~'`, [
    "echo",
    "*.txt",
    "?",
    "[x]",
    "{a,b}",
    "!",
    "#x",
    "~",
  ]],
  [`echo \\; \\| \\&`, ["echo", ";", "|", "&"]],
  [`git show HEAD~1`, ["git", "show", "HEAD~1"]],
  [`echo a#b`, ["echo", "a#b"]],
  [`echo héllo`, ["echo", "héllo"]],
  [`echo ]`, ["echo", "]"]],
];

for (const [raw, argv] of SPLITS) {
  Deno.test(`tokenize() splits ${JSON.stringify(raw)} without expanding anything`, () => {
    const result = tokenize(raw);
    ok(result.ok, JSON.stringify(result));
    deepEqual(result.argv, argv);
  });
}

const PARSE_ERRORS: readonly string[] = [
  `echo 'unterminated`,
  `echo "unterminated`,
  `echo "a'`,
  `echo trailing\\`,
  "",
  "   ",
  "\t",
];

for (const raw of PARSE_ERRORS) {
  Deno.test(`tokenize() answers PARSE_ERROR for ${JSON.stringify(raw)}`, () => {
    const result = tokenize(raw);
    ok(!result.ok);
    equal(result.code, "PARSE_ERROR");
    ok(result.reason.length > 0);
  });
}

Deno.test("tokenize() returns a frozen argv, so nothing downstream can re-split or edit it", () => {
  const result = tokenize("ls -la");
  ok(result.ok);
  ok(Object.isFrozen(result.argv));
});

Deno.test("tokenize() throws TypeError for a non-string, so a caller bug is not a verdict", () => {
  // deno-lint-ignore no-explicit-any
  throws(() => tokenize(42 as any), TypeError);
  // deno-lint-ignore no-explicit-any
  throws(() => tokenize(new String("ls") as any), TypeError);
});

Deno.test("tokenize() answers PARSE_ERROR for an unbalanced quote even after a separator", () => {
  const result = tokenize(`echo a; echo 'b`);
  ok(!result.ok);
  equal(result.code, "PARSE_ERROR");
});
