/**
 * The full-control splitter and judge, case by case: which words start a
 * simple command (so the denylist sees them) and which are data, and the
 * exact code of every refusal.
 */
import assert from "node:assert/strict";
import { judgeShellText, splitSimpleCommands } from "../../src/full_control/mod.ts";
import { makePolicy } from "../_helpers/policy.ts";

const policy = makePolicy({ jailRoot: "/tmp", allow: [] });
const withDenylist = {
  ...policy,
  denylist: new Set(["rm", "sudo", "dd", "curl"]),
  rules: [{ command: "git", denyArgs: ["push --force"], enforce: "deny" as const, reason: "no" }],
};

function firstWords(text: string): string[] {
  const split = splitSimpleCommands(text);
  assert.ok(split.ok, split.ok ? "" : split.reason);
  return split.commands.map((words) => words.map((w) => w.text).join(" "));
}

Deno.test("splitSimpleCommands() splits on ; && || | & ( ) and newlines, keeping quoted separators as data", () => {
  assert.deepEqual(firstWords("a 1; b 2 && c || d | e & f\n(g) ; echo 'x; rm y' \"p | q\""), [
    "a 1",
    "b 2",
    "c",
    "d",
    "e",
    "f",
    "g",
    "echo x; rm y p | q",
  ]);
});

Deno.test("splitSimpleCommands() finds commands inside $(...), backticks, <(...) and double quotes", () => {
  assert.deepEqual(firstWords('echo "$(id -u)" `whoami` <(ls) $((1 + 2))'), [
    "id -u",
    "whoami",
    "ls",
    "echo $(...) `...` <(...) $((1 + 2))",
  ]);
});

Deno.test("splitSimpleCommands() drops redirection targets, here-document bodies and comments", () => {
  assert.deepEqual(firstWords("cat <<EOF > out.txt 2>&1\nrm -rf /\nEOF\n# rm x\necho done"), [
    "cat",
    "echo done",
  ]);
  assert.deepEqual(firstWords("echo hi>rm; echo 2>/dev/null x"), ["echo hi", "echo x"]);
});

Deno.test("splitSimpleCommands() refuses what bash could not parse either", () => {
  for (
    const text of ["echo 'open", 'echo "open', "echo $(id", "echo `id", "cat <<EOF\nno end"]
  ) {
    const split = splitSimpleCommands(text);
    assert.equal(split.ok, false, text);
  }
});

Deno.test("judgeShellText() allows ordinary development work", () => {
  for (
    const text of [
      "for i in 1 2 3; do echo $i; done > out.txt",
      "npm test && python3 -m pytest -q || make -j2",
      'if [ -f x ]; then cat x | grep -c y; else echo "no x"; fi',
      "X=$(ls | wc -l) ; echo $X",
      "git push origin main",
    ]
  ) {
    const judged = judgeShellText(withDenylist, text);
    assert.ok(judged.ok, `${text}: ${judged.ok ? "" : judged.reason}`);
  }
});

Deno.test("judgeShellText() refuses a denylisted first word wherever it starts a simple command", () => {
  for (
    const text of [
      "rm -rf x",
      "echo a; RM x",
      "true && /usr/bin/rm x",
      "ls | sudo tee f",
      "echo $(sudo id)",
      "echo `dd if=/dev/zero`",
      "diff <(curl http://x) y",
      "X=1 Y=2 rm x",
      "if true; then rm x; fi",
      "while true; do rm x; done",
      "env -i FOO=1 rm x",
      "timeout 5 rm x",
      "time -p rm x",
      "nice -n 5 rm x",
      "xargs -n 1 rm < list",
      "flock /tmp/l rm x",
      "exec rm x",
      "eval 'rm x'",
      "bash -c 'echo hi; rm x'",
      'sh -ec "rm x"',
      "git push --force",
    ]
  ) {
    const judged = judgeShellText(withDenylist, text);
    assert.equal(judged.ok, false, text);
    if (!judged.ok) assert.equal(judged.code, "POLICY_DENIED", `${text}: ${judged.reason}`);
  }
});

Deno.test("judgeShellText() refuses a command name bash builds at run time, which no list can judge", () => {
  for (
    const text of ["c=rm; $c x", "$(echo rm) x", "${CMD} x", "$'\\x72m' x", '"$X" y', "eval $X"]
  ) {
    const judged = judgeShellText(withDenylist, text);
    assert.equal(judged.ok, false, text);
    if (!judged.ok) {
      assert.equal(judged.code, "POLICY_DENIED");
      assert.match(judged.reason, /built when bash runs/);
    }
  }
});

Deno.test("judgeShellText() judges the commands of a case statement", () => {
  assert.ok(judgeShellText(withDenylist, 'case "$1" in a) echo A;; *) echo B;; esac').ok);
  assert.equal(judgeShellText(withDenylist, "case x in a) rm y;; esac").ok, false);
  assert.equal(judgeShellText(withDenylist, "case x in a) echo;; b) sudo id;; esac").ok, false);
});

Deno.test("judgeShellText() gives PARSE_ERROR for text it cannot split", () => {
  const judged = judgeShellText(withDenylist, "echo 'unterminated");
  assert.equal(judged.ok, false);
  if (!judged.ok) assert.equal(judged.code, "PARSE_ERROR");
});

Deno.test("judgeShellText() names the denylisted word in a sentence", () => {
  const judged = judgeShellText(withDenylist, "echo ok; sudo id");
  assert.deepEqual(judged, {
    ok: false,
    code: "POLICY_DENIED",
    reason:
      'Cannot run "sudo": it is on the denylist (full-control mode applies it to the first word of every simple command).',
  });
});
