/**
 * The typed command plan: what a command text means once htmcp, not a shell,
 * has read it. Every construct here is one htmcp models and runs itself
 * (pipes, sequences, the redirections below, `cd`, globs expanded inside the
 * jail); anything else a shell would interpret is refused while parsing, so a
 * plan never carries a meaning the server does not implement.
 *
 * @module
 */

import type { PlanWord, PolicyRefusalCode } from "../policy/types.ts";

export type { PlanWord };

/** Where a redirection sends or takes a stream. */
export type Redirection =
  /** `< FILE`: stdin read from a file. */
  | { readonly kind: "read"; readonly fd: 0; readonly target: PlanWord }
  /** `> FILE`, `>> FILE`, `2> FILE`, `2>> FILE` (and `1>`). */
  | {
    readonly kind: "write";
    readonly fd: 1 | 2;
    readonly append: boolean;
    readonly target: PlanWord;
  }
  /** `2>&1` (fd 2 joins fd 1) or `>&2` / `1>&2` (fd 1 joins fd 2). */
  | { readonly kind: "dup"; readonly fd: 1 | 2; readonly to: 1 | 2 };

/** One program of a pipeline: its words (command word first) and redirections in order. */
export interface CommandStage {
  /** The command word first, then its arguments, each with its quoting kept. */
  readonly words: readonly PlanWord[];
  /** The stage's redirections, in the order they were written and are applied. */
  readonly redirections: readonly Redirection[];
}

/** `a | b | c`: stages joined by kernel pipes; one stage is a plain command. */
export interface Pipeline {
  /** The stages left to right; the output of each feeds the next. */
  readonly stages: readonly CommandStage[];
}

/** One step of a sequence: a pipeline to run, or the `cd` built-in. */
export type Step =
  | { readonly kind: "pipeline"; readonly pipeline: Pipeline }
  | { readonly kind: "cd"; readonly dir: PlanWord };

/**
 * How a step is joined to the one before it: `&&` runs it only after a
 * success, `||` only after a failure, `;` always. The first step has `null`.
 */
export type Connector = "&&" | "||" | ";";

/** A whole command text: steps in order, each with its connector. */
export interface Plan {
  /** The steps in order, each with the connector before it (`null` for the first). */
  readonly steps: readonly { readonly connector: Connector | null; readonly step: Step }[];
}

/** The parser's answer: a plan, or a refusal with one sentence. */
export type PlanParseResult =
  | { readonly ok: true; readonly plan: Plan }
  | { readonly ok: false; readonly code: PolicyRefusalCode; readonly reason: string };
