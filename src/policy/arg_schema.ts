/**
 * Argument schemas: a policy may allowlist a command's subcommands and flags
 * (`[commands.git] subcommands = [...]`, `flags.commit = [...]`) instead of
 * only denying words. Pure.
 *
 * Why allowlisting flags closes a class of bugs denylists keep reopening:
 * argv injection through an allowlisted CLI (`--upload-pack=`, `--output=`,
 * `--config-env=`) needs no shell, and GNU-style parsers accept any unique
 * prefix of a long option (`git fetch --upl=...` is `--upload-pack`). Here a
 * flag is accepted only when it is spelled exactly as the operator listed it,
 * so an abbreviation is simply an unknown flag, and unknown flags are refused.
 *
 * Spelling in the policy: `"--message="` / `"-m="` (a trailing `=`) marks a
 * flag that takes a value: `--message=x`, `--message x`, `-mx` and `-m x` are
 * all accepted, and the value is never read as a flag. A single-letter flag
 * may be clustered (`-am` = `-a -m`). Everything after a bare `--` is an
 * operand. Operands are not judged here: path confinement and the guards
 * still apply to every word.
 *
 * @module
 */

import type { ArgSchema, FlagList } from "../config/types.ts";

function describe(list: FlagList): string {
  const names = [...list.names].sort();
  return names.length === 0 ? "none" : names.join(", ");
}

/** How many words the flag at `args[index]` takes, or why it is refused. */
function matchFlag(
  args: readonly string[],
  index: number,
  list: FlagList,
  where: string,
): { consumed: number; ends?: boolean } | { refusal: string } {
  const word = args[index] as string;
  if (word.startsWith("--")) {
    const equals = word.indexOf("=");
    const name = equals === -1 ? word : word.slice(0, equals);
    if (!list.names.has(name)) {
      return {
        refusal: `the flag "${name}" is not allowed ${where} (allowed: ${describe(list)}); ` +
          `flags must be spelled out exactly, abbreviations included`,
      };
    }
    if (!list.takesValue.has(name)) {
      return equals === -1
        ? { consumed: 1 }
        : { refusal: `the flag "${name}" takes no value ${where}` };
    }
    const ends = list.endsOptions.has(name);
    if (equals !== -1) return { consumed: 1, ends };
    if (index + 1 >= args.length) return { refusal: `the flag "${name}" needs a value` };
    return { consumed: 2, ends };
  }
  // A short-flag cluster: each letter a listed flag; a value-taking letter
  // takes the rest of the word, or the next word.
  for (let at = 1; at < word.length; at++) {
    const flag = `-${word[at]}`;
    if (!list.names.has(flag)) {
      return { refusal: `the flag "${flag}" is not allowed ${where} (allowed: ${describe(list)})` };
    }
    if (list.takesValue.has(flag)) {
      const ends = list.endsOptions.has(flag);
      if (at + 1 < word.length) return { consumed: 1, ends };
      if (index + 1 >= args.length) return { refusal: `the flag "${flag}" needs a value` };
      return { consumed: 2, ends };
    }
  }
  return { consumed: 1 };
}

function isFlag(word: string): boolean {
  return word.startsWith("-") && word !== "-";
}

/**
 * Checks `args` against a command's schema.
 *
 * @param commandName The allowlisted name (for the sentence).
 * @param schema The command's `[commands.NAME]` schema.
 * @param args The arguments after the command word.
 * @returns Null when the arguments fit the schema, else the refusal sentence.
 *
 * @example
 * ```ts
 * import { checkArgSchema } from "./arg_schema.ts";
 * declare const schema: import("../config/types.ts").ArgSchema;
 * checkArgSchema("git", schema, ["fetch", "--upl=evil"]); // a sentence, or null
 * ```
 */
export function checkArgSchema(
  commandName: string,
  schema: ArgSchema,
  args: readonly string[],
): string | null {
  let index = 0;
  let flags = schema.flags;
  let where = `for "${commandName}"`;
  if (schema.subcommands !== null) {
    while (index < args.length && isFlag(args[index] as string)) {
      const matched = matchFlag(args, index, schema.globalFlags, `before the subcommand`);
      if ("refusal" in matched) return `Cannot run "${commandName}": ${matched.refusal}.`;
      index += matched.consumed;
    }
    const subcommand = args[index];
    const allowed = [...schema.subcommands].sort().join(", ");
    if (subcommand === undefined) {
      return `Cannot run "${commandName}" without a subcommand; the policy allows: ${allowed}.`;
    }
    if (!schema.subcommands.has(subcommand)) {
      return `Cannot run "${commandName} ${subcommand}": the policy allows only these ` +
        `subcommands: ${allowed}.`;
    }
    flags = schema.subcommandFlags.get(subcommand) ?? EMPTY_FLAGS;
    where = `for "${commandName} ${subcommand}"`;
    index++;
  }
  while (index < args.length) {
    const word = args[index] as string;
    if (word === "--") return null;
    if (!isFlag(word)) {
      index++;
      continue;
    }
    const matched = matchFlag(args, index, flags, where);
    if ("refusal" in matched) return `Cannot run "${commandName}": ${matched.refusal}.`;
    // `python3 -m pytest -q`: the rest is the named program's own argv.
    if (matched.ends === true) return null;
    index += matched.consumed;
  }
  return null;
}

/** No flag at all: what a subcommand without a `flags.NAME` list accepts. */
export const EMPTY_FLAGS: FlagList = Object.freeze({
  names: new Set<string>(),
  takesValue: new Set<string>(),
  endsOptions: new Set<string>(),
});
