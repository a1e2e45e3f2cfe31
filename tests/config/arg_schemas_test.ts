import { equal, match, ok } from "node:assert/strict";
import { withScratch } from "./_fixture.ts";

const HEAD = (jail: string) =>
  `jail_root = ${JSON.stringify(jail)}\naudit_log = "audit/a.jsonl"\n` +
  `[allowlist]\ncommands = ["git", "ls"]\n[sandbox]\nmode = "bwrap"\n`;

const REFUSED: readonly (readonly [string, RegExp])[] = [
  [`[commands.cat]\nflags = ["-n"]`, /"commands\.cat" names "cat", which is not on the allowlist/],
  [
    `[commands.ls]\nflags.x = ["-l"]`,
    /is a table by subcommand, but "commands\.ls" lists no subcommands/,
  ],
  [`[commands.git]\nsubcommands = ["log"]\nflags = ["-p"]`, /must be a table by subcommand/],
  [
    `[commands.git]\nsubcommands = ["log"]\nflags.push = ["-f"]`,
    /"commands\.git\.flags\.push" is for a subcommand/,
  ],
  [`[commands.ls]\nglobal_flags = ["-C"]`, /needs "commands\.ls\.subcommands"/],
  [`[commands.ls]\nflags = ["l"]`, /must be a flag such as/],
  [`[commands.ls]\nflags = ["--a b"]`, /must be a flag such as/],
  [`[commands.ls]\nunknown = 1`, /commands\.ls/],
];

for (const [toml, message] of REFUSED) {
  Deno.test(`loadPolicy() refuses the argument schema ${JSON.stringify(toml)}`, async () => {
    await withScratch(async (scratch) => {
      const result = await scratch.load(HEAD(scratch.jail) + toml);
      ok(!result.ok, "loaded");
      match(result.message, message);
    });
  });
}

Deno.test("loadPolicy() builds schemas: value flags, option-ending flags, per-subcommand lists", async () => {
  await withScratch(async (scratch) => {
    const result = await scratch.load(
      HEAD(scratch.jail) +
        `[commands.git]\nsubcommands = ["log", "commit"]\nflags.commit = ["-m=", "-a"]\n` +
        `global_flags = ["-C="]\n[commands.ls]\nflags = ["-l", "--color=..."]\n`,
    );
    ok(result.ok, result.ok ? "" : result.message);
    const git = result.policy.argSchemas.get("git");
    ok(git !== undefined && git.subcommands !== null);
    equal([...git.subcommands].join(","), "log,commit");
    ok(git.subcommandFlags.get("commit")?.takesValue.has("-m"));
    equal(git.subcommandFlags.has("log"), false);
    ok(git.globalFlags.takesValue.has("-C"));
    const ls = result.policy.argSchemas.get("ls");
    ok(ls?.flags.endsOptions.has("--color"));
  });
});
