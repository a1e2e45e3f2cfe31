/**
 * Value types of the policy engine. Every refusal is a value with a string
 * code; nothing here throws for an expected outcome.
 *
 * @module
 */

import type { ResolvedCommand } from "../config/types.ts";

/** The codes the tokenizer and the policy engine may refuse with. */
export type PolicyRefusalCode = "POLICY_DENIED" | "PARSE_ERROR";

/** Result of splitting raw command text into argv. */
export type TokenizeResult =
  | { readonly ok: true; readonly argv: readonly string[] }
  | { readonly ok: false; readonly code: PolicyRefusalCode; readonly reason: string };

/**
 * Exactly what runs: the executor spawns `path` with `args` and adds `env`
 * to the child environment, and the audit records the same `args`. Every
 * argument the policy adds for safety (git's `--no-pager -c ...` and
 * `--no-ext-diff --no-textconv`) is already in `args`, so what is audited is
 * what runs.
 */
export interface RunSpec {
  /** The program's absolute path, as the allowlist resolved it (what `--allow-run` grants). */
  readonly path: string;
  /** Its arguments, the policy's safety options included (no `argv[0]`). */
  readonly args: readonly string[];
  /** Variables added to the child environment for this command. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The verdict on one command. `argv[0]` is the command word as typed; the
 * executor runs `command.path` with `argv.slice(1)` and never re-tokenizes.
 */
export type Decision =
  | {
    readonly ok: true;
    readonly argv: readonly string[];
    /**
     * The words the argument path check reads: the typed argv with sed
     * scripts and awk programs blanked (`""`), since program text such as
     * `/re/{print}` names no path. Same length and order as the typed argv.
     */
    readonly pathArgv: readonly string[];
    /** The complete run specification (path, every argument, extra environment). */
    readonly run: RunSpec;
    readonly command: ResolvedCommand;
    readonly reason: string;
    /**
     * Rules with `enforce = "warn"` that would have refused this command:
     * one sentence each, for the reply's reason and the audit record.
     */
    readonly ruleWarnings: readonly string[];
    /**
     * The `decision = "prompt"` rule this otherwise allowed command matches,
     * or null. The engine only says so; the tool layer holds the command
     * until a human answers.
     */
    readonly prompt: PromptHit | null;
  }
  | {
    readonly ok: false;
    readonly code: PolicyRefusalCode;
    readonly reason: string;
    /** The split argv when tokenizing succeeded, for the audit record; null otherwise. */
    readonly argv: readonly string[] | null;
  };

/**
 * The one filesystem question the policy engine may ask, injected so the
 * engine itself stays pure: the symlink-free absolute path of `path`, or null
 * when it does not exist or cannot be resolved (which the engine treats as
 * "not the same file", so it fails closed).
 */
export interface PolicyIo {
  /**
   * Resolves every symlink in `path`.
   *
   * @param path An absolute path (a path-qualified command word, resolved).
   * @returns The real path, or null when it cannot be resolved.
   */
  realPath(path: string): string | null;
}

/**
 * One word of a command after quote removal. `glob` marks the positions of
 * unquoted `*`, `?` and `[`: only those are pattern characters, so `'*.ts'`
 * stays the literal text `*.ts` while `*.ts` is expanded.
 */
export interface PlanWord {
  /** The word's text with quotes and escapes removed. */
  readonly text: string;
  /** True when a quote or backslash contributed to the word. */
  readonly quoted: boolean;
  /** Code-unit indexes in `text` of unquoted glob characters; empty when none. */
  readonly globAt: readonly number[];
}

/** A command held for a human by a `decision = "prompt"` rule. */
export interface PromptHit {
  /** The allowlisted command the rule names. */
  readonly command: string;
  /** The rule's `args` entry that matched, as the operator wrote it. */
  readonly entry: string;
  /** The operator's sentence shown to whoever answers. */
  readonly justification: string;
}
