/**
 * Attack class: spelling a denied or unlisted command so that a name check
 * misses it. The command name is matched exactly on its basename after
 * resolution; every variant below is refused with POLICY_DENIED. Tests the
 * policy engine directly; nothing runs.
 */
import { equal, match, ok } from "node:assert/strict";
import { evaluateCommand } from "../../src/policy/mod.ts";
import { policyAllowing } from "../policy/_fixtures.ts";

const policy = policyAllowing(
  ["ls", "cat", "echo", "git"],
  {},
  ["rm", "sudo", "dd", "shutdown"],
);

const BYPASSES: readonly (readonly [string, string, RegExp])[] = [
  ["upper case", "RM -rf /", /denylist/],
  ["mixed case", "Rm -rf /", /denylist/],
  ["double-quoted name", `"rm" -rf /`, /quoted or escaped/],
  ["single-quoted name", `'rm' -rf /`, /quoted or escaped/],
  ["partly quoted name", `r"m" -rf /`, /quoted or escaped/],
  ["backslash inside the name", `r\\m -rf /`, /quoted or escaped/],
  ["backslash before the name", `\\rm -rf /`, /quoted or escaped/],
  ["empty quotes joined to the name", `rm'' -rf /`, /quoted or escaped/],
  ["absolute path", "/bin/rm -rf /", /denylist/],
  ["absolute /usr path", "/usr/bin/rm -rf /", /denylist/],
  ["dot-slash path", "./rm -rf /", /denylist/],
  ["dot-dot path", "/usr/bin/../bin/rm -rf /", /denylist/],
  ["double slash", "//usr/bin/rm -rf /", /denylist/],
  ["glob in the path", "/usr/bin/r? -rf /", /glob/],
  ["star glob in the path", "/usr/bin/r* -rf /", /glob/],
  ["bracket glob in the name", "r[m] -rf /", /glob/],
  ["brace in the name", "{rm,x} -rf /", /brace/],
  ["env-assignment prefix", "X=1 rm -rf /", /environment assignment/],
  [
    "env-assignment prefix before an allowed command",
    "LD_PRELOAD=/tmp/x.so ls",
    /environment assignment/,
  ],
  ["Cyrillic look-alike", "rм -rf /", /non-ASCII/],
  ["Cyrillic look-alike of an allowed name", "lѕ", /non-ASCII/],
  ["fullwidth letters", "ｒｍ -rf /", /non-ASCII/],
  ["trailing dot", "rm. -rf /", /not on the allowlist/],
  ["unlisted command", "python3 -c 1", /not on the allowlist/],
  ["unlisted command with a denied look", "shred x", /not on the allowlist/],
  ["relative path to an allowed name", "./ls", /relative path/],
  ["relative folder path to an allowed name", "bin/ls", /relative path/],
  ["dot-dot path to an allowed name", "/usr/bin/../bin/ls", /"\."|"\.\."|empty segment/],
  ["absolute path to an allowed name in another folder", "/tmp/ls", /not the same file/],
  ["trailing slash", "/usr/bin/ls/", /folder/],
  ["percent job spec", "%1", /character/],
  ["at sign", "ls@", /character/],
  ["colon builtin", ":", /character/],
  ["dot builtin (source)", ". x", /not on the allowlist/],
  ["inherited key", "constructor", /not on the allowlist/],
  ["prototype key", "__proto__", /not on the allowlist/],
  ["toString key", "toString", /not on the allowlist/],
];

for (const [what, raw, reason] of BYPASSES) {
  Deno.test(`evaluateCommand() refuses a command name spelled with ${what}: ${JSON.stringify(raw)}`, () => {
    const decision = evaluateCommand(raw, policy);
    ok(!decision.ok, JSON.stringify(decision));
    equal(decision.code, "POLICY_DENIED");
    match(decision.reason, reason);
  });
}

Deno.test("evaluateCommand() allows an absolute path that is the allowlisted file itself", () => {
  const ls = policy.allowlist.get("ls");
  ok(ls !== undefined);
  const decision = evaluateCommand(`${ls.path} -la`, policy);
  ok(decision.ok, JSON.stringify(decision));
  equal(decision.command, ls, "the allowlisted entry is what runs, not the typed path");
});

Deno.test("evaluateCommand() allows another absolute spelling that resolves to the same real file", () => {
  // On merged-/usr systems /bin/ls and /usr/bin/ls are one file.
  const ls = policy.allowlist.get("ls");
  ok(ls !== undefined);
  const alternate = ls.path.startsWith("/usr/bin/") ? "/bin/ls" : "/usr/bin/ls";
  let same = false;
  try {
    same = Deno.realPathSync(alternate) === ls.realPath;
  } catch {
    same = false;
  }
  const decision = evaluateCommand(alternate, policy);
  equal(decision.ok, same, JSON.stringify(decision));
});
