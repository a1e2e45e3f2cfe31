import { equal, match, ok } from "node:assert/strict";
import { checkArgSchema } from "../../src/policy/arg_schema.ts";
import type { ArgSchema, FlagList } from "../../src/config/types.ts";

function list(spelled: string[]): FlagList {
  const names = new Set<string>();
  const takesValue = new Set<string>();
  const endsOptions = new Set<string>();
  for (const entry of spelled) {
    const name = entry.replace(/=(\.\.\.)?$/, "");
    names.add(name);
    if (entry.includes("=")) takesValue.add(name);
    if (entry.endsWith("=...")) endsOptions.add(name);
  }
  return { names, takesValue, endsOptions };
}

const GIT: ArgSchema = {
  subcommands: new Set(["log", "commit", "status"]),
  flags: list([]),
  subcommandFlags: new Map([["log", list(["--oneline", "-n="])], ["commit", list(["-m=", "-a"])]]),
  globalFlags: list(["-C="]),
};
const PYTHON: ArgSchema = {
  subcommands: null,
  flags: list(["-m=...", "-B"]),
  subcommandFlags: new Map(),
  globalFlags: list([]),
};

const ALLOWED: readonly (readonly [ArgSchema, string[]])[] = [
  [GIT, ["log", "--oneline"]],
  [GIT, ["log", "-n", "5"]],
  [GIT, ["log", "-n5", "file"]],
  [GIT, ["-C", "sub", "log"]],
  [GIT, ["commit", "-am", "msg"]],
  [GIT, ["commit", "-a", "-m", "--oneline"]],
  [GIT, ["status"]],
  [GIT, ["log", "--", "--not-a-flag"]],
  [GIT, ["log", "-"]],
  [PYTHON, ["-m", "pytest", "-q", "--tb=short"]],
  [PYTHON, ["-mpytest", "-x"]],
  [PYTHON, ["-B", "script.py"]],
];

for (const [schema, args] of ALLOWED) {
  Deno.test(`checkArgSchema() allows ${JSON.stringify(args)}`, () => {
    equal(checkArgSchema("cmd", schema, args), null);
  });
}

const REFUSED: readonly (readonly [ArgSchema, string[], RegExp])[] = [
  [GIT, [], /without a subcommand/],
  [GIT, ["push"], /only these subcommands: commit, log, status/],
  [GIT, ["status", "-s"], /"-s" is not allowed for "cmd status" \(allowed: none\)/],
  [GIT, ["log", "--one"], /"--one" is not allowed .* abbreviations included/],
  [GIT, ["log", "--oneline=yes"], /takes no value/],
  [GIT, ["log", "-n"], /needs a value/],
  [GIT, ["commit", "-ax"], /"-x" is not allowed/],
  [GIT, ["-c", "x=y", "log"], /before the subcommand/],
  [GIT, ["--upload-pack=x", "log"], /before the subcommand/],
  [GIT, ["-C"], /needs a value/],
  [PYTHON, ["-c", "print(1)"], /"-c" is not allowed/],
  [PYTHON, ["-Bc", "x"], /"-c" is not allowed/],
];

for (const [schema, args, message] of REFUSED) {
  Deno.test(`checkArgSchema() refuses ${JSON.stringify(args)}`, () => {
    const refusal = checkArgSchema("cmd", schema, args);
    ok(refusal !== null, "allowed");
    match(refusal, message);
  });
}
