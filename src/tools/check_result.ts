/**
 * The verdict of the one command check (`checkCommand`), shared by the
 * plain-command and the full-control shell-text paths so neither imports
 * the other.
 *
 * @module
 */
import type { ResolvedCommand } from "../config/types.ts";
import type { PromptHit, RunSpec } from "../policy/mod.ts";
import type { CheckedPlan } from "../plan/mod.ts";
import type { ResultCode } from "../result/codes.ts";

/** Whether a command may run, and if so exactly what runs. */
export type CheckResult =
  | {
    readonly ok: true;
    /** The argv that runs (a plan: its first stage's, for naming and the audit summary). */
    readonly argv: readonly string[];
    /** Exactly what runs (and what the audit records): the policy's run specification. */
    readonly run: RunSpec;
    readonly command: ResolvedCommand;
    readonly cwd: string;
    readonly reason: string;
    /** `enforce = "warn"` rules that would have refused it (reply and audit say so). */
    readonly ruleWarnings: readonly string[];
    /**
     * Every prompt rule that holds it (a plan: any stage's); empty when it
     * may run without a human's approval.
     */
    readonly prompts: readonly PromptHit[];
    /** The whole plan when the text composes several commands; null for a plain command. */
    readonly plan: CheckedPlan | null;
  }
  | {
    readonly ok: false;
    readonly code: ResultCode;
    readonly reason: string;
    readonly argv: readonly string[] | null;
    readonly cwd: string | null;
    /**
     * Set only when the text was nothing but `cd DIR` (every cd judged and
     * confined): the folder it leads to, which a session adopts as its cwd.
     */
    readonly cdTarget?: string;
  };
