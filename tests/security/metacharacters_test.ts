/**
 * Attack class: shell syntax smuggled into the command text. htmcp runs no
 * shell, so each of these is refused (POLICY_DENIED) before any policy
 * lookup, even though `echo` itself is allowlisted. Tests the policy engine
 * directly; nothing runs.
 */
import { equal, ok } from "node:assert/strict";
import { evaluateCommand, tokenize } from "../../src/policy/mod.ts";
import { policyAllowing } from "../policy/_fixtures.ts";

const policy = policyAllowing(["echo", "ls", "cat"]);

/** Refused when written outside quotes. */
const UNQUOTED: readonly (readonly [string, string])[] = [
  ["separator", "echo a; touch canary"],
  ["separator without spaces", "echo a;touch canary"],
  ["pipe", "echo a | sh"],
  ["OR list", "echo a || touch canary"],
  ["AND list", "echo a && touch canary"],
  ["background", "echo a & touch canary"],
  ["background at the end", "echo a &"],
  ["output redirection", "echo a > canary"],
  ["append redirection", "echo a >> canary"],
  ["clobber redirection", "echo a >| canary"],
  ["fd redirection", "echo a 2>&1"],
  ["input redirection", "cat < /etc/passwd"],
  ["here-document", "cat << EOF"],
  ["here-string", "cat <<< x"],
  ["input process substitution", "cat <(id)"],
  ["output process substitution", "echo a >(id)"],
  ["subshell", "(touch canary)"],
  ["subshell in an argument", "echo (a)"],
  ["closing parenthesis", "echo a)"],
  ["star glob", "cat *.txt"],
  ["question-mark glob", "cat ?.txt"],
  ["bracket glob", "cat [a-z].txt"],
  ["brace expansion", "echo {a,b}"],
  ["brace range", "echo {1..3}"],
  ["command group", "{ echo a"],
  ["closing brace", "echo a }"],
  ["history expansion", "echo !!"],
  ["pipeline negation", "! echo a"],
  ["comment", "echo a #; touch canary"],
  ["tilde at a word start", "cat ~/.ssh/id_rsa"],
  ["bare tilde", "ls ~"],
  ["tilde after =", "ls --directory=~/x"],
  ["tilde after :", "echo PATH=a:~/b"],
  ["tilde user", "ls ~root"],
];

for (const [what, raw] of UNQUOTED) {
  Deno.test(`evaluateCommand() refuses an unquoted ${what}: ${JSON.stringify(raw)}`, () => {
    const decision = evaluateCommand(raw, policy);
    ok(!decision.ok);
    equal(decision.code, "POLICY_DENIED");
    equal(decision.argv, null, "argv is null: the text never became words");
    ok(/shell/.test(decision.reason), decision.reason);
  });
}

/** Refused anywhere, quoted or not. */
const ANYWHERE: readonly (readonly [string, string])[] = [
  ["command substitution", "echo $(id)"],
  ["quoted command substitution", `echo "$(id)"`],
  ["variable", "echo $HOME"],
  ["braced variable", `echo "\${HOME}"`],
  ["ANSI-C quoting", `echo $'\\x41'`],
  ["arithmetic", "echo $((1+1))"],
  ["backtick substitution", "echo `id`"],
  ["quoted backtick", 'echo "`id`"'],
  ["newline", "echo a\ntouch canary"],
  ["quoted newline", "echo 'a\ntouch canary'"],
  ["carriage return", "echo a\rtouch canary"],
  ["NUL", "echo a\0b"],
  ["escape (ESC)", "echo \x1b[31m"],
  ["DEL", "echo a\x7f"],
  ["vertical tab", "echo a\vb"],
  ["form feed", "echo a\fb"],
  ["NEL (U+0085)", "echo a\u0085b"],
  ["line separator (U+2028)", "echo a\u2028touch canary"],
  ["paragraph separator (U+2029)", "echo a\u2029b"],
  ["zero-width space", "echo a\u200bb"],
  ["right-to-left override", "echo 'a\u202eb'"],
  ["byte-order mark", "\ufeffecho a"],
  ["no-break space", "echo\u00a0a"],
  ["ideographic space", "echo\u3000a"],
  ["lone surrogate", "echo a\ud800"],
  ["soft hyphen", "echo a\u00adb"],
];

for (const [what, raw] of ANYWHERE) {
  Deno.test(`evaluateCommand() refuses a ${what} anywhere in the command`, () => {
    const decision = evaluateCommand(raw, policy);
    ok(!decision.ok);
    equal(decision.code, "POLICY_DENIED");
    equal(decision.argv, null);
  });
}

Deno.test("tokenize() passes quoted separators, pipes, globs and braces through as plain data", () => {
  for (const raw of [`echo ';' '|' '&' '<' '>' '(' ')' '*' '?' '[' '{' '}' '!' '#' '~'`]) {
    const result = tokenize(raw);
    ok(result.ok, JSON.stringify(result));
    equal(result.argv.length, 16);
  }
});

Deno.test("evaluateCommand() allows an escaped separator as data: \\; reaches echo as one word", () => {
  const decision = evaluateCommand("echo a\\;b", policy);
  ok(decision.ok, JSON.stringify(decision));
  equal(decision.argv[1], "a;b");
});

Deno.test("evaluateCommand() says the refusal is about shell syntax, quoting the character", () => {
  const decision = evaluateCommand("echo a | sh", policy);
  ok(!decision.ok);
  ok(decision.reason.includes('"|"'), decision.reason);
});

Deno.test("evaluateCommand() passes a single-quoted dollar as plain text, as every POSIX shell does", () => {
  for (
    const [raw, word] of [[`echo '$(id)'`, "$(id)"], [`echo 'foo$'`, "foo$"], [
      "echo '`id`'",
      "`id`",
    ]]
  ) {
    const decision = evaluateCommand(raw as string, policy);
    ok(decision.ok, JSON.stringify(decision));
    equal(decision.argv[1], word);
  }
});
