import { deepEqual, equal } from "node:assert/strict";
import {
  externalStrategyArgument,
  isBuiltinMergeStrategy,
  pullRebasingMerges,
  rebasesMerges,
  todoExecLine,
  todoOctopusLine,
} from "../../src/policy/git_programs.ts";

Deno.test("isBuiltinMergeStrategy() accepts only the strategies git runs itself", () => {
  for (const name of ["ort", "recursive", "ours", "subtree", "ort\n"]) {
    equal(isBuiltinMergeStrategy(name), true, name);
  }
  for (const name of ["resolve", "octopus", "evil", "", "../x", "ORT"]) {
    equal(isBuiltinMergeStrategy(name), false, name);
  }
});

const STRATEGIES: readonly (readonly [string, readonly string[], string | null])[] = [
  ["merge", ["-s", "resolve", "other"], "resolve"],
  ["merge", ["-sresolve", "other"], "resolve"],
  ["merge", ["-nsoctopus", "a", "b"], "octopus"],
  ["merge", ["--strategy", "resolve", "other"], "resolve"],
  ["merge", ["--strategy=octopus", "other"], "octopus"],
  ["pull", ["-s", "resolve", "origin"], "resolve"],
  ["rebase", ["--strategy=resolve", "main"], "resolve"],
  ["cherry-pick", ["--strategy", "resolve", "abc"], "resolve"],
  ["revert", ["--strategy=resolve", "abc"], "resolve"],
  // A strategy with no name after it is refused, not skipped.
  ["merge", ["-s"], ""],
  // Built in, or not a strategy at all.
  ["merge", ["-s", "ort", "other"], null],
  ["merge", ["-n", "-s", "ours", "other"], null],
  ["merge", ["-Xtheirs", "other"], null],
  // -m takes a value: "-mmessage" is the message "message", not -m -m -e -s sage.
  ["merge", ["-mmessage", "other"], null],
  // For cherry-pick and revert, -s is --signoff.
  ["cherry-pick", ["-s", "abc"], null],
  ["revert", ["-s", "abc"], null],
  // Other subcommands have no strategy; after "--" are paths.
  ["commit", ["-s", "-m", "x"], null],
  ["merge", ["--", "-sresolve"], null],
  [null as unknown as string, ["-s", "resolve"], null],
];

for (const [subcommand, rest, expected] of STRATEGIES) {
  Deno.test(`externalStrategyArgument() reads git ${subcommand} ${rest.join(" ")} as ${JSON.stringify(expected)}`, () => {
    equal(externalStrategyArgument(subcommand, rest), expected);
  });
}

Deno.test("todoExecLine() finds exec and x lines as git's parser takes them, and nothing else", () => {
  equal(todoExecLine("pick abc one\nexec touch x\n"), "exec touch x");
  equal(todoExecLine("pick abc one\n  \tx touch x\n"), "x touch x");
  equal(todoExecLine("EXEC touch x"), "EXEC touch x");
  equal(todoExecLine("x\n"), "x");
  deepEqual(
    ["pick abc x", "# exec touch x", "execute", "break", "label x", "reset x", ""].map(
      todoExecLine,
    ),
    [null, null, null, null, null, null, null],
  );
});

Deno.test("todoOctopusLine() finds a merge line with more than one parent, past -C/-c and before a comment", () => {
  equal(todoOctopusLine("pick a one\nmerge -C abc x y # octo\n"), "merge -C abc x y # octo");
  equal(todoOctopusLine("m x y"), "m x y");
  equal(todoOctopusLine("merge -c abc x # one parent\nmerge x\n"), null);
  equal(todoOctopusLine("pick a merge x y"), null);
});

Deno.test("pullRebasingMerges() and rebasesMerges() read git pull's --rebase value and the configuration's", () => {
  equal(pullRebasingMerges("pull", ["--rebase=merges", "origin"]), "--rebase=merges");
  equal(pullRebasingMerges("pull", ["--reb=m"]), "--reb=m");
  equal(pullRebasingMerges("pull", ["-rmerges"]), "-rmerges");
  // A cluster carries -r's value too (round nine got past the guard with -vrmerges).
  equal(pullRebasingMerges("pull", ["-vrmerges", "origin"]), "-vrmerges");
  equal(pullRebasingMerges("pull", ["-qvrm"]), "-qvrm");
  equal(pullRebasingMerges("pull", ["-vr"]), null);
  // After digits too (round ten): -4 is an option of its own.
  equal(pullRebasingMerges("pull", ["-4rmerges"]), "-4rmerges");
  equal(pullRebasingMerges("pull", ["--rebase", "origin"]), null);
  equal(pullRebasingMerges("pull", ["--rebase=true"]), null);
  equal(pullRebasingMerges("fetch", ["--rebase=merges"]), null);
  deepEqual(["merges", "m", "preserve", " Merges "].map(rebasesMerges), [true, true, true, true]);
  deepEqual(["true", "false", "interactive", ""].map(rebasesMerges), [false, false, false, false]);
});
