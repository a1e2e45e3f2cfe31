/**
 * The plan lexer: command text -> words and operators, with POSIX quoting
 * (single quotes, double quotes, backslash) and nothing expanded. Pure.
 *
 * It recognises exactly the operators htmcp implements itself (`|`, `&&`,
 * `||`, `;`, `<`, `>`, `>>`, an fd digit before a redirection, `>&1`/`>&2`)
 * and refuses, with the reason a shell would have given the syntax, every
 * other construct a shell interprets: a refusal here means nothing of the
 * text can run with a meaning its author did not intend.
 *
 * Quoting keeps its POSIX meaning of "literal data": inside single quotes
 * every character is literal, `$` and backtick included (no shell expands
 * there); inside double quotes `$` and backtick still expand in a shell, so
 * they are refused there as outside quotes. Control, format and non-ASCII
 * space characters are refused anywhere (`findRefusedCodePoint`).
 *
 * @module
 */

import { findRefusedCodePoint, UNQUOTED_OPERATORS } from "./metacharacters.ts";
import type { PlanWord, PolicyRefusalCode } from "./types.ts";

/** An operator token: what joins commands or redirects a stream. */
export type Operator =
  | { readonly kind: "pipe" }
  | { readonly kind: "and" }
  | { readonly kind: "or" }
  | { readonly kind: "semicolon" }
  | { readonly kind: "read"; readonly fd: 0 }
  | { readonly kind: "write"; readonly fd: 1 | 2; readonly append: boolean }
  | { readonly kind: "dup"; readonly fd: 1 | 2; readonly to: 1 | 2 };

/** One lexical token. */
export type Token =
  | { readonly type: "word"; readonly word: PlanWord }
  | { readonly type: "op"; readonly op: Operator; readonly text: string };

/** The lexer's answer. */
export type LexResult =
  | { readonly ok: true; readonly tokens: readonly Token[] }
  | { readonly ok: false; readonly code: PolicyRefusalCode; readonly reason: string };

const SHELL_NOTE = "htmcp runs no shell; quote it to pass it as plain data.";

/** Unquoted characters that are always refused (what a shell would do: `UNQUOTED_OPERATORS`). */
const REFUSED_UNQUOTED: ReadonlySet<string> = new Set(["(", ")", "{", "}", "!"]);

/** Characters that end a word and start an operator. */
const OPERATOR_START = new Set(["|", "&", ";", "<", ">"]);

/** Unquoted pattern characters: expanded by htmcp inside the jail. */
const GLOB_CHARACTERS = new Set(["*", "?", "["]);

function refuse(code: PolicyRefusalCode, reason: string): LexResult {
  return { ok: false, code, reason };
}

function denied(reason: string): LexResult {
  return refuse("POLICY_DENIED", reason);
}

/** A word being built: its text, whether quoting touched it, its glob positions. */
class WordBuilder {
  text = "";
  started = false;
  quoted = false;
  /** Only unquoted ASCII digits so far (an fd number before `<`/`>`). */
  digitsOnly = true;
  globAt: number[] = [];
  /** The previous character when it was added unquoted (for `~` after `=`/`:`). */
  previousPlain: string | null = null;

  add(character: string, quoted: boolean): void {
    if (quoted || !/^[0-9]$/.test(character)) this.digitsOnly = false;
    this.text += character;
    this.started = true;
    this.previousPlain = quoted ? null : character;
  }

  markQuoted(): void {
    this.started = true;
    this.quoted = true;
    this.digitsOnly = false;
    this.previousPlain = null;
  }

  take(): PlanWord {
    const word: PlanWord = Object.freeze({
      text: this.text,
      quoted: this.quoted,
      globAt: Object.freeze([...this.globAt]),
    });
    this.text = "";
    this.started = false;
    this.quoted = false;
    this.digitsOnly = true;
    this.globAt = [];
    this.previousPlain = null;
    return word;
  }
}

function expansionRefusal(character: string, where: string): LexResult {
  const what = character === "$"
    ? "variable, arithmetic or command substitution"
    : "command substitution";
  return denied(
    `The command contains "${character}" ${where}, which a shell treats as ${what}; ` +
      `htmcp runs no shell and expands nothing (inside single quotes it is plain text).`,
  );
}

/**
 * Reads the operator starting at `index` (an unquoted `|&;<>`), with the fd
 * number `fd` when the word before it was only digits. Returns the operator
 * and how many characters it took, or a refusal.
 */
function readOperator(
  characters: readonly string[],
  index: number,
  fd: number | null,
): { op: Operator; length: number; text: string } | LexResult {
  const at = (offset: number) => characters[index + offset] ?? "";
  const first = at(0);
  const second = at(1);
  if (fd !== null && first !== "<" && first !== ">") {
    throw new RangeError("An fd number is only read before a redirection.");
  }
  if (first === "|") {
    if (second === "|") return { op: { kind: "or" }, length: 2, text: "||" };
    if (second === "&") {
      return denied(`The command contains "|&", a shell's pipe of stderr too; write "2>&1 |".`);
    }
    return { op: { kind: "pipe" }, length: 1, text: "|" };
  }
  if (first === "&") {
    if (second === "&") return { op: { kind: "and" }, length: 2, text: "&&" };
    if (second === ">") {
      return denied(
        `The command contains "&>", a shell's redirection of both streams; write "> FILE 2>&1".`,
      );
    }
    return denied(
      `The command contains "&" outside quotes, which a shell treats as running a command in ` +
        `the background; htmcp runs each command to its end (use a background job instead). ` +
        SHELL_NOTE,
    );
  }
  if (first === ";") {
    if (second === ";") return denied(`The command contains ";;", a shell's case terminator.`);
    return { op: { kind: "semicolon" }, length: 1, text: ";" };
  }
  if (first === "<") {
    if (fd !== null && fd !== 0) {
      return denied(
        `The redirection "${fd}<" reads into descriptor ${fd}; only "<" (stdin) is supported.`,
      );
    }
    if (second === "<") {
      return denied(
        `The command contains "<<", a shell's here-document; pass the text as run_command's ` +
          `stdin instead.`,
      );
    }
    if (second === "(") {
      return denied(`The command contains "<(", a process substitution; ${SHELL_NOTE}`);
    }
    if (second === "&" || second === ">") {
      return denied(`The redirection "<${second}" is not supported; use "< FILE".`);
    }
    return { op: { kind: "read", fd: 0 }, length: 1, text: "<" };
  }
  // first === ">"
  const target = fd ?? 1;
  if (target !== 1 && target !== 2) {
    return denied(
      `The redirection "${fd}>" writes descriptor ${fd}; only stdout (1) and stderr (2) can be redirected.`,
    );
  }
  if (second === "(") {
    return denied(`The command contains ">(", a process substitution; ${SHELL_NOTE}`);
  }
  if (second === "|") {
    return denied(
      `The redirection ">|" (a shell's overwrite despite noclobber) is not supported; use ">".`,
    );
  }
  if (second === "&") {
    const to = at(2);
    const after = at(3);
    const ends = after === "" || after === " " || after === "\t" || OPERATOR_START.has(after);
    if ((to === "1" || to === "2") && ends) {
      const toFd = to === "1" ? 1 : 2;
      const text = `${fd ?? ""}>&${to}`;
      if (toFd === target) {
        return denied(`The redirection "${text}" points a descriptor at itself.`);
      }
      return { op: { kind: "dup", fd: target, to: toFd }, length: 3, text };
    }
    return denied(
      `The redirection ">&" must be followed by 1 or 2 ("2>&1", ">&2"); ` +
        `other descriptors and ">&FILE" are not supported.`,
    );
  }
  if (second === ">") {
    return {
      op: { kind: "write", fd: target, append: true },
      length: 2,
      text: `${fd ?? ""}>>`,
    };
  }
  return { op: { kind: "write", fd: target, append: false }, length: 1, text: `${fd ?? ""}>` };
}

/**
 * Splits `raw` into words and operators.
 *
 * @param raw The command text exactly as the client sent it.
 * @returns The tokens, or `POLICY_DENIED` (shell syntax htmcp does not
 *   implement) / `PARSE_ERROR` (unbalanced quote, trailing backslash).
 * @throws {TypeError} When `raw` is not a string (a caller bug).
 *
 * @example
 * ```ts
 * import { lexPlan } from "./lex.ts";
 * const result = lexPlan(`grep -rn 'a|b' src | sort`);
 * // result.tokens: word grep, word -rn, word a|b, word src, op |, word sort
 * ```
 */
export function lexPlan(raw: string): LexResult {
  if (typeof raw !== "string") throw new TypeError("lexPlan() expects a string.");
  const refusedCodePoint = findRefusedCodePoint(raw);
  if (refusedCodePoint !== null) return denied(refusedCodePoint);

  const characters = Array.from(raw);
  const tokens: Token[] = [];
  const word = new WordBuilder();
  let state: "plain" | "single" | "double" = "plain";
  const endWord = () => {
    if (word.started) tokens.push({ type: "word", word: word.take() });
  };

  for (let index = 0; index < characters.length; index++) {
    const character = characters[index] as string;
    if (state === "single") {
      if (character === "'") state = "plain";
      else word.add(character, true);
      continue;
    }
    if (state === "double") {
      if (character === '"') {
        state = "plain";
      } else if (character === "$" || character === "`") {
        return expansionRefusal(character, "inside double quotes");
      } else if (character === "\\") {
        // POSIX: inside double quotes a backslash escapes only $ ` " \ and
        // newline; `$`, backtick and newline are refused anyway.
        const next = characters[index + 1];
        if (next === '"' || next === "\\") {
          word.add(next, true);
          index++;
        } else {
          word.add(character, true);
        }
      } else {
        word.add(character, true);
      }
      continue;
    }
    if (character === " " || character === "\t") {
      endWord();
      continue;
    }
    if (character === "'" || character === '"') {
      state = character === "'" ? "single" : "double";
      word.markQuoted();
      continue;
    }
    if (character === "\\") {
      const next = characters[index + 1];
      if (next === undefined) {
        return refuse("PARSE_ERROR", "The command ends with a backslash that escapes nothing.");
      }
      word.markQuoted();
      word.add(next, true);
      index++;
      continue;
    }
    if (character === "$" || character === "`") {
      return expansionRefusal(character, "outside quotes");
    }
    if (OPERATOR_START.has(character)) {
      // `2>f`: a word of digits only, written right before the operator, is its fd.
      let fd: number | null = null;
      if ((character === "<" || character === ">") && word.started && word.digitsOnly) {
        fd = Number(word.text);
        word.take();
      } else {
        endWord();
      }
      const read = readOperator(characters, index, fd);
      if ("ok" in read) return read;
      tokens.push({ type: "op", op: read.op, text: read.text });
      index += read.length - 1;
      continue;
    }
    // `[!...]` is a negated bracket expression of a glob, not history expansion.
    const negatesBracket = character === "!" && word.text.endsWith("[") &&
      word.globAt.at(-1) === word.text.length - 1;
    const always = negatesBracket || !REFUSED_UNQUOTED.has(character)
      ? undefined
      : UNQUOTED_OPERATORS.get(character);
    if (always !== undefined) {
      return denied(
        `The command contains "${character}" outside quotes, which a shell treats as ${always}; ${SHELL_NOTE}`,
      );
    }
    if (character === "#" && !word.started) {
      return denied(
        `The command has a word starting with "#" outside quotes, which a shell treats as a comment; ${SHELL_NOTE}`,
      );
    }
    if (
      character === "~" &&
      (!word.started || word.previousPlain === "=" || word.previousPlain === ":")
    ) {
      return denied(
        `The command contains "~" where a shell would expand it to a home folder; ${SHELL_NOTE}`,
      );
    }
    if (GLOB_CHARACTERS.has(character)) word.globAt.push(word.text.length);
    word.add(character, false);
  }

  if (state !== "plain") {
    const quote = state === "single" ? "'" : '"';
    return refuse("PARSE_ERROR", `The command has an unbalanced ${quote} quote.`);
  }
  endWord();
  return { ok: true, tokens: Object.freeze(tokens) };
}
