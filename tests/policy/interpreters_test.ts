import { deepEqual, equal, match, ok } from "node:assert/strict";
import { activeGuardSummaries, interpreterWarnings, isInterpreter } from "../../src/policy/mod.ts";
import { policyAllowing } from "./_fixtures.ts";

// deno-fmt-ignore
const INTERPRETERS = [
  "sh", "bash", "dash", "zsh", "python", "python3", "python3.12", "node", "nodejs", "perl",
  "perl5.36", "ruby", "deno", "php", "php8.2", "lua", "lua5.4", "luajit", "tclsh", "make", "npm",
];

for (const name of INTERPRETERS) {
  Deno.test(`interpreterWarnings() warns about an allowlisted "${name}", naming it`, () => {
    const warnings = interpreterWarnings(["ls", name]);
    equal(warnings.length, 1);
    match(warnings[0] ?? "", new RegExp(`"${name.replaceAll(".", "\\.")}"`));
  });
}

Deno.test("interpreterWarnings() is silent for ordinary tools and guarded awk/sed", () => {
  deepEqual(
    interpreterWarnings(["ls", "cat", "grep", "git", "awk", "sed", "find", "pythonic"]),
    [],
  );
  ok(!isInterpreter("awk"));
});

Deno.test("interpreterWarnings() warns about awk once its guard is disabled", () => {
  const warnings = interpreterWarnings(["awk", "ls"], new Set(["awk-commands"]));
  equal(warnings.length, 1);
  match(warnings[0] ?? "", /"awk-commands" is disabled, so "awk"/);
});

Deno.test("interpreterWarnings() warns about each allowlisted command whose guard is disabled", () => {
  const warnings = interpreterWarnings(["find", "env"], new Set(["find-exec", "launcher-env"]));
  equal(warnings.length, 2);
});

Deno.test("activeGuardSummaries() lists enabled guards for allowlisted commands only", () => {
  const policy = policyAllowing(["find", "ls"], { disabledGuards: new Set(["find-delete"]) });
  const names = activeGuardSummaries(policy).map((summary) => summary.name).sort();
  deepEqual(names, ["find-exec", "find-write"]);
  for (const summary of activeGuardSummaries(policy)) match(summary.rule, /"find"/);
});

Deno.test("activeGuardSummaries() describes a whole-command guard as refusing the command", () => {
  const summaries = activeGuardSummaries(policyAllowing(["less"]));
  deepEqual(summaries.map((summary) => summary.name), ["pager-less"]);
  match(summaries[0]?.rule ?? "", /^"less" is refused:/);
});
