import { deepEqual, equal, match, ok } from "node:assert/strict";
import { evaluateArgv, evaluateCommand, tokenize } from "../../src/policy/mod.ts";
import { policyAllowing, WIDE_ALLOW } from "./_fixtures.ts";

const policy = policyAllowing(WIDE_ALLOW);

Deno.test("evaluateArgv() keeps a word with a blank as one word", () => {
  const decision = evaluateArgv(["grep", "a b", "file"], policy);
  ok(decision.ok, JSON.stringify(decision));
  deepEqual(decision.argv, ["grep", "a b", "file"]);
});

Deno.test("evaluateArgv() reaches the same verdict as evaluateCommand() on the tokenized argv", () => {
  const texts = [
    "ls -la",
    "rm -rf /",
    "find . -exec id \\;",
    "git -c core.pager=id log",
    "sort --compress-program=id x",
    "grep -n 'a|b' notes.txt",
    "sed -e 'e id' x",
  ];
  for (const text of texts) {
    const split = tokenize(text);
    ok(split.ok, text);
    const fromText = evaluateCommand(text, policy);
    const fromArgv = evaluateArgv(split.argv, policy);
    equal(fromArgv.ok, fromText.ok, text);
    deepEqual(fromArgv.argv, fromText.argv, text);
    if (!fromArgv.ok && !fromText.ok) equal(fromArgv.reason, fromText.reason, text);
  }
});

Deno.test("evaluateArgv() takes $ and backticks as data (no shell sees an argv) and refuses controls", () => {
  for (const word of ["$HOME", "`id`"]) {
    const decision = evaluateArgv(["echo", word], policy);
    ok(decision.ok, JSON.stringify(decision));
    equal(decision.argv[1], word);
  }
  for (const word of ["a\nb", "a\u200bb"]) {
    const decision = evaluateArgv(["echo", word], policy);
    ok(!decision.ok, JSON.stringify(word));
    equal(decision.code, "POLICY_DENIED");
  }
});

Deno.test("evaluateArgv() refuses a command word that is really a whole command", () => {
  const decision = evaluateArgv(["ls -la"], policy);
  ok(!decision.ok);
  equal(decision.code, "POLICY_DENIED");
  match(decision.reason, /blank/);
});

Deno.test("evaluateArgv() calls an empty argv or an empty command word a parse error", () => {
  for (const argv of [[], [""]]) {
    const decision = evaluateArgv(argv, policy);
    ok(!decision.ok);
    equal(decision.code, "PARSE_ERROR");
  }
});
