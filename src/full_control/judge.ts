/**
 * What the policy still decides in full-control mode: the denylist and the
 * `[[rules]]` (`enforce = "deny"`), applied to every simple command the
 * splitter finds in the bash text. Pure.
 *
 * Best effort by construction (see `split.ts`): bash decides at run time
 * what runs, and a name built at run time cannot be judged before. So a
 * simple command whose name is an expansion (`$c`, `$(...)`, `$'\x72m'`) is
 * refused rather than let through unjudged, wrappers that run their
 * arguments (`env`, `exec`, `xargs`, `timeout`, ...) are looked through, and
 * `eval TEXT` and `bash -c TEXT` have their text split and judged too. What
 * this cannot see (a script file, `python3 -c`, `find -exec`, a function
 * defined earlier) runs; the kernel sandbox is what contains it.
 *
 * @module
 */
import type { ArgRule } from "../config/types.ts";
import { findRuleHit } from "../policy/mod.ts";
import { type ShellWord, splitSimpleCommands } from "./split.ts";

/** The verdict on a bash text. */
export type ShellJudgement =
  | {
    readonly ok: true;
    /** Every simple command found, as its words from the command name on (for later checks). */
    readonly commands: readonly (readonly string[])[];
  }
  | { readonly ok: false; readonly code: "POLICY_DENIED" | "PARSE_ERROR"; readonly reason: string };

/** Reserved words after which (or instead of which) the command name comes. */
const KEYWORDS = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "{",
  "}",
  "!",
  "coproc",
]);

/** Constructs whose words are never a command (`for i in ...`, `case x in`, `[[ ... ]]`). */
const NOT_COMMANDS = new Set(["for", "select", "case", "esac", "in", "[[", "function", ";;"]);

/**
 * Programs that run their arguments as a command. After one, its options,
 * assignments and numeric values (`timeout 5`, `nice -n 5`, `xargs -n 1`) are
 * skipped and the next word is judged as a command name too; the values
 * listed here take one more positional word first (`flock FILE cmd`).
 */
const WRAPPERS: ReadonlyMap<string, number> = new Map([
  ["time", 0],
  ["exec", 0],
  ["command", 0],
  ["builtin", 0],
  ["nohup", 0],
  ["env", 0],
  ["nice", 0],
  ["timeout", 0],
  ["stdbuf", 0],
  ["setsid", 0],
  ["xargs", 0],
  ["ionice", 0],
  ["unbuffer", 0],
  ["chrt", 1],
  ["taskset", 1],
  ["flock", 1],
]);

/** Shells whose `-c TEXT` is itself bash text to judge. */
const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "ash", "rbash"]);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const OPTION_OR_NUMBER = /^(-.*|[0-9][0-9.]*[smhd]?)$/;

const MAX_NESTING = 8;

/**
 * What of a policy the shell judge applies (a loaded `Policy` is one): the
 * denylist and the argument rules, which is all full-control mode keeps of
 * the policy (the allowlist does not apply to bash text).
 */
export interface ShellPolicy {
  /** Command names refused wherever they start a simple command (compared in lower case). */
  readonly denylist: ReadonlySet<string>;
  /** The argument rules, applied to each simple command as to an argv call. */
  readonly rules: readonly ArgRule[];
}

/**
 * Judges `text` for full-control mode.
 *
 * @param policy The loaded policy (its denylist and rules).
 * @param text The bash text the model sent.
 * @returns The simple commands found, or the refusal with its code.
 *
 * @example
 * ```ts
 * import { judgeShellText } from "./judge.ts";
 * const policy = { denylist: new Set(["rm"]), rules: [] };
 * judgeShellText(policy, "ls | grep x").ok; // true
 * judgeShellText(policy, "ls && $(echo x; rm -rf /tmp/x)").ok; // false: rm starts a simple command
 * ```
 */
export function judgeShellText(policy: ShellPolicy, text: string): ShellJudgement {
  const denied = new Set([...policy.denylist].map((name) => name.toLowerCase()));
  const found: string[][] = [];
  const refusal = judgeText(policy, denied, text, found, 0);
  return refusal ?? { ok: true, commands: found };
}

type Refusal = Extract<ShellJudgement, { ok: false }>;

function judgeText(
  policy: ShellPolicy,
  denied: ReadonlySet<string>,
  text: string,
  found: string[][],
  nesting: number,
): Refusal | null {
  if (nesting > MAX_NESTING) {
    return deny("shell text nests eval and -c more deeply than the denylist check follows.");
  }
  const split = splitSimpleCommands(text);
  if (!split.ok) {
    return {
      ok: false,
      code: "PARSE_ERROR",
      reason:
        `The command cannot be split into simple commands (${split.reason}), so the denylist cannot be applied to it.`,
    };
  }
  for (const words of split.commands) {
    const refused = judgeCommand(policy, denied, words, found, nesting);
    if (refused !== null) return refused;
  }
  return null;
}

function judgeCommand(
  policy: ShellPolicy,
  denied: ReadonlySet<string>,
  words: readonly ShellWord[],
  found: string[][],
  nesting: number,
): Refusal | null {
  let i = 0;
  for (;;) {
    while (i < words.length && isPrefix(words[i] as ShellWord)) i++;
    const first = words[i];
    if (first === undefined || NOT_COMMANDS.has(first.text)) return null;
    if (first.expanded) {
      return deny(
        `Cannot run "${first.text}": the command name is built when bash runs, so the denylist cannot judge it; write the command name plainly.`,
      );
    }
    const name = baseName(first.text);
    const args = words.slice(i + 1).map((word) => word.text);
    found.push([first.text, ...args]);
    if (denied.has(name.toLowerCase())) {
      return deny(
        `Cannot run "${first.text}": it is on the denylist (full-control mode applies it to the first word of every simple command).`,
      );
    }
    const hit = findRuleHit(name, args, policy.rules);
    if (hit !== null) {
      return deny(
        `Cannot run "${first.text}": its arguments match the policy rule "${hit.entry}" (${hit.rule.reason}).`,
      );
    }
    if (name === "eval") {
      const rest = words.slice(i + 1);
      if (rest.some((word) => word.expanded)) {
        return deny(
          'Cannot run "eval": its text is built when bash runs, so the denylist cannot judge it.',
        );
      }
      return judgeText(policy, denied, args.join(" "), found, nesting + 1);
    }
    if (SHELLS.has(name)) {
      return judgeShellArgument(policy, denied, words.slice(i + 1), found, nesting);
    }
    const positional = WRAPPERS.get(name);
    if (positional === undefined) return null;
    i++;
    while (i < words.length && isWrapperOption(words[i] as ShellWord)) i++;
    i += positional;
  }
}

/** `bash -c TEXT` (also `-ec`, `-lc`): TEXT is judged as bash text. */
function judgeShellArgument(
  policy: ShellPolicy,
  denied: ReadonlySet<string>,
  args: readonly ShellWord[],
  found: string[][],
  nesting: number,
): Refusal | null {
  const flag = args.findIndex((word) => /^-[A-Za-z]*c[A-Za-z]*$/.test(word.text));
  if (flag < 0) return null;
  const script = args[flag + 1];
  if (script === undefined) return null;
  if (script.expanded) {
    return deny(
      "Cannot run a shell with -c: its text is built when bash runs, so the denylist cannot judge it.",
    );
  }
  return judgeText(policy, denied, script.text, found, nesting + 1);
}

function isPrefix(word: ShellWord): boolean {
  // An assignment's value may be expanded (`X=$(cmd)`): its commands were
  // split out and judged on their own; the assignment runs nothing itself.
  return KEYWORDS.has(word.text) || ASSIGNMENT.test(word.text);
}

function isWrapperOption(word: ShellWord): boolean {
  return OPTION_OR_NUMBER.test(word.text) || ASSIGNMENT.test(word.text);
}

function baseName(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1);
}

function deny(reason: string): Refusal {
  return { ok: false, code: "POLICY_DENIED", reason };
}
