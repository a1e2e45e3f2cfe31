/**
 * Judges a whole plan before anything of it runs: every `cd` confined like
 * a cwd, every glob expanded inside the jail, every stage a full policy
 * decision (allowlist, denylist, rules, guards) on its final argv, every
 * path argument and redirection target confined. One refused stage refuses
 * the whole plan, and the reason names the stage.
 *
 * The result is exactly what runs: each stage's argv after expansion, its
 * resolved binary, its working folder and its redirections as real paths.
 * The audit attempt records this, and the executor runs this; nothing is
 * split, expanded or resolved again later.
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { confineArgs, confineCwd } from "../jail/mod.ts";
import type { PromptHit, RunSpec, Word } from "../policy/mod.ts";
import {
  CheckBudget,
  type FolderLister,
  MAX_PATH_LOOKUPS,
  PATH_CHECK_DEADLINE_MS,
} from "../jail/mod.ts";
import { checkWords } from "./check_words.ts";
import type { ResultCode } from "../result/codes.ts";
import { expandGlob } from "./expand_glob.ts";
import { mayChangeWhatPathsLeadTo, mayWriteFiles } from "./tree_changes.ts";
import { gitMayWriteWorkTree, isGitCommand } from "../policy/mod.ts";
import { gitFolderRefusal } from "./git_folder_paths.ts";
import type { CommandStage, Connector, Plan, PlanWord, Redirection } from "./types.ts";

/** A redirection with its target resolved to the path that will be opened. */
export type CheckedRedirection =
  | { readonly kind: "read"; readonly fd: 0; readonly path: string }
  | { readonly kind: "write"; readonly fd: 1 | 2; readonly append: boolean; readonly path: string }
  | { readonly kind: "dup"; readonly fd: 1 | 2; readonly to: 1 | 2 };

/** One stage as it will run. */
export interface CheckedStage {
  /** The argv as typed and expanded; `argv[0]` is the command word as typed. */
  readonly argv: readonly string[];
  /** Exactly what runs: the policy's run specification (git's safety options included). */
  readonly run: RunSpec;
  /** The allowlist entry the command word resolved to. */
  readonly command: ResolvedCommand;
  /** The redirections with their paths confined to the jail, in order. */
  readonly redirections: readonly CheckedRedirection[];
  /** `enforce = "warn"` rules that would have refused this stage. */
  readonly ruleWarnings: readonly string[];
  /** The prompt rule that holds this stage (so the whole plan) for a human, or null. */
  readonly prompt: PromptHit | null;
}

/** One pipeline as it will run, in its working folder. */
export interface CheckedPipeline {
  /** How it is joined to the pipeline before it; null for the first. */
  readonly connector: Connector | null;
  /** The jail-confined real folder it runs in (after the `cd`s before it). */
  readonly cwd: string;
  /** Its stages, left to right. */
  readonly stages: readonly CheckedStage[];
}

/** The whole plan as it will run. */
export interface CheckedPlan {
  /** The folder the leading `cd`s lead to (the jail-confined real path). */
  readonly cwd: string;
  /** The pipelines in order; a `cd` step leaves none of its own. */
  readonly pipelines: readonly CheckedPipeline[];
}

/** The verdict on a plan. */
export type PlanCheckResult =
  | { readonly ok: true; readonly plan: CheckedPlan }
  | {
    readonly ok: false;
    readonly code: ResultCode;
    readonly reason: string;
    /** The 1-based stage the refusal is about, counted across the plan; null for a `cd`. */
    readonly stage: number | null;
  };

/** The only redirection target outside the jail: writing to it discards, reading gives EOF. */
export const DEV_NULL = "/dev/null";

function stageLabel(index: number, argv0: string): string {
  return `Stage ${index} ("${argv0}")`;
}

async function checkTarget(
  policy: Policy,
  cwd: string,
  target: PlanWord,
  budget: CheckBudget,
): Promise<{ ok: true; path: string } | { ok: false; code: ResultCode; reason: string }> {
  if (target.globAt.length > 0) {
    return {
      ok: false,
      code: "POLICY_DENIED",
      reason: `the redirection target "${target.text}" is a pattern; write the file name out.`,
    };
  }
  if (target.text === DEV_NULL) return { ok: true, path: DEV_NULL };
  const path = posix.resolve(cwd, target.text);
  // Redirection targets are confined whether or not `[paths] confine_args`
  // is on: the server itself opens them, so they are never the command's
  // own business.
  const confined = await confineArgs(policy.jailRoot, cwd, [path], budget);
  if (!confined.ok) {
    return {
      ok: false,
      code: confined.code,
      reason: `the redirection target "${target.text}" is not inside the jail.`,
    };
  }
  if (policy.sandbox.mode === "none") {
    // The server opens it, for whichever command: git included, since what
    // it would write there is the command's output, not git's own state.
    const places = confined.value.map((reached) => ({
      path: reached.path,
      what: `the redirection target "${target.text}"`,
      named: true,
    }));
    const refused = await gitFolderRefusal(policy.jailRoot, places, false, budget);
    if (refused !== null) return { ok: false, code: "POLICY_DENIED", reason: refused };
  }
  return { ok: true, path };
}

async function checkStage(
  policy: Policy,
  cwd: string,
  stage: CommandStage,
  budget: CheckBudget,
): Promise<
  | { ok: true; stage: CheckedStage }
  | { ok: false; code: ResultCode; reason: string; argv0: string }
> {
  const argv0 = stage.words[0]?.text ?? "";
  const words: Word[] = [];
  for (const [index, word] of stage.words.entries()) {
    // The command word is never a pattern: `l*` must not pick a binary.
    if (index === 0 && word.globAt.length > 0) {
      return {
        ok: false,
        code: "POLICY_DENIED",
        reason: `the command name "${word.text}" is a pattern; write the name out.`,
        argv0,
      };
    }
    const expanded = await expandGlob(policy.jailRoot, cwd, word, budget);
    if (!expanded.ok) return { ok: false, code: "PATH_ESCAPE", reason: expanded.reason, argv0 };
    for (const text of expanded.words) words.push({ text, quoted: word.quoted });
  }
  const checked = await checkWords(policy, words, cwd, budget);
  if (!checked.ok) return { ok: false, code: checked.code, reason: checked.reason, argv0 };
  const redirections: CheckedRedirection[] = [];
  for (const redirection of stage.redirections) {
    const checked = await checkRedirection(policy, cwd, redirection, budget);
    if (!checked.ok) return { ok: false, code: checked.code, reason: checked.reason, argv0 };
    redirections.push(checked.redirection);
  }
  return {
    ok: true,
    stage: Object.freeze({
      argv: checked.argv,
      run: checked.run,
      command: checked.command,
      redirections: Object.freeze(redirections),
      ruleWarnings: checked.ruleWarnings,
      prompt: checked.prompt,
    }),
  };
}

async function checkRedirection(
  policy: Policy,
  cwd: string,
  redirection: Redirection,
  budget: CheckBudget,
): Promise<
  { ok: true; redirection: CheckedRedirection } | { ok: false; code: ResultCode; reason: string }
> {
  if (redirection.kind === "dup") return { ok: true, redirection };
  const target = await checkTarget(policy, cwd, redirection.target, budget);
  if (!target.ok) return target;
  return {
    ok: true,
    redirection: redirection.kind === "read"
      ? Object.freeze({ kind: "read", fd: 0, path: target.path })
      : Object.freeze({
        kind: "write",
        fd: redirection.fd,
        append: redirection.append,
        path: target.path,
      }),
  };
}

/**
 * Judges `plan` for a call whose working folder is `requestedCwd`.
 *
 * @param policy The loaded policy.
 * @param plan The parsed plan.
 * @param requestedCwd The caller's cwd (undefined = the jail root), as for a single command.
 * @param lister How its checks list folders (the executor's), or null for in this process.
 * @returns The plan as it will run, or the first refusal with its code,
 *   a reason naming the stage, and the stage's number.
 */
export async function checkPlan(
  policy: Policy,
  plan: Plan,
  requestedCwd: string | undefined,
  lister: FolderLister | null = null,
): Promise<PlanCheckResult> {
  const start = await confineCwd(policy.jailRoot, requestedCwd);
  if (!start.ok) return { ok: false, code: start.code, reason: start.reason, stage: null };
  let cwd = start.value;
  const pipelines: CheckedPipeline[] = [];
  let stageNumber = 0;
  // One budget for the whole call: a plan of many stages gets no more lookups than one command.
  const budget = new CheckBudget(PATH_CHECK_DEADLINE_MS, MAX_PATH_LOOKUPS, lister);
  // Without the kernel sandbox, the stage that may change what paths lead
  // to (`tree_changes.ts`), once one has been checked: every later step was
  // checked against files that stage may have changed before it runs.
  const unsandboxed = policy.sandbox.mode === "none";
  let changer = null as { label: string; number: number } | null;
  // Under the kernel sandbox, the first stage that may write files: git's
  // repository check reads the files as they are before the plan runs, so
  // a git stage after or beside a writer would run on files nobody
  // checked (round twelve: `echo ... > .gitmodules && git add sub && git
  // status` entered a nested repository the check had not seen named).
  // git after git is checked, but for the subcommands that make or move a
  // repository or write tracked files into the work tree (gitMayWriteWorkTree).
  let writer = null as string | null;
  for (const { connector, step } of plan.steps) {
    if (changer !== null) {
      const what = step.kind === "cd"
        ? `"cd ${step.dir.text}"`
        : stageLabel(stageNumber + 1, step.pipeline.stages[0]?.words[0]?.text ?? "");
      return {
        ok: false,
        code: "POLICY_DENIED",
        reason:
          `${what} runs after ${changer.label}, which may rename files or make links, so the paths checked for it now may lead elsewhere by then; without the kernel sandbox htmcp checks each step against the files as they are when it runs: send them as separate calls.`,
        stage: step.kind === "cd" ? null : stageNumber + 1,
      };
    }
    if (step.kind === "cd") {
      // `cd DIR` is relative to the folder the previous `cd` led to.
      const target = posix.resolve(cwd, step.dir.text);
      const relative = posix.relative(policy.jailRoot, target);
      const next = await confineCwd(policy.jailRoot, relative === "" ? "." : relative);
      if (!next.ok) {
        return {
          ok: false,
          code: next.code,
          reason: `"cd ${step.dir.text}": ${next.reason}`,
          stage: null,
        };
      }
      cwd = next.value;
      continue;
    }
    const stages: CheckedStage[] = [];
    for (const stage of step.pipeline.stages) {
      stageNumber++;
      const checked = await checkStage(policy, cwd, stage, budget);
      if (!checked.ok) {
        const label = stageLabel(stageNumber, checked.argv0);
        return {
          ok: false,
          code: checked.code,
          reason: plan.steps.length === 1 && step.pipeline.stages.length === 1
            ? capitalise(checked.reason)
            : `${label}: ${checked.reason}`,
          stage: stageNumber,
        };
      }
      stages.push(checked.stage);
      if (unsandboxed && changer === null && mayChangeWhatPathsLeadTo(checked.stage.command)) {
        changer = {
          label: stageLabel(stageNumber, checked.stage.argv[0] ?? ""),
          number: stageNumber,
        };
      }
    }
    if (!unsandboxed) {
      const first = stageNumber - stages.length + 1;
      // git after git is judged too: the subcommands that make or move a
      // repository or write tracked files write where the check did not look.
      const writes = (stage: CheckedStage) =>
        stage.redirections.some((r) => r.kind === "write") ||
        (isGitCommand(stage.command)
          ? gitMayWriteWorkTree(stage.argv.slice(1))
          : mayWriteFiles(stage.command));
      // Each git stage of the pipeline, against every other stage of it.
      const besides = stages.flatMap((stage, git) =>
        isGitCommand(stage.command)
          ? [{ git, beside: stages.findIndex((other, i) => i !== git && writes(other)) }]
          : []
      );
      const found = besides.find(({ beside }) => writer !== null || beside !== -1);
      if (found !== undefined) {
        const { git, beside } = found;
        const label = stageLabel(first + git, stages[git]!.argv[0] ?? "");
        const by = writer ?? stageLabel(first + beside, stages[beside]!.argv[0] ?? "");
        return {
          ok: false,
          code: "POLICY_DENIED",
          reason: `${label} runs ${
            writer !== null ? "after" : "at the same time as"
          } ${by}, which may write files; git's repository check reads the files as they are before the plan runs, so it could not vet what git would then read: send them as separate calls.`,
          stage: first + git,
        };
      }
      const written = stages.findIndex(writes);
      if (writer === null && written !== -1) {
        writer = stageLabel(first + written, stages[written]!.argv[0] ?? "");
      }
    }
    // A pipeline's stages run at once: one that may change what paths lead
    // to races every other stage's checked paths.
    if (changer !== null && stages.length > 1) {
      const other = changer.number === stageNumber - stages.length + 1
        ? stageLabel(changer.number + 1, stages[1]!.argv[0] ?? "")
        : stageLabel(stageNumber - stages.length + 1, stages[0]!.argv[0] ?? "");
      return {
        ok: false,
        code: "POLICY_DENIED",
        reason:
          `${other} runs at the same time as ${changer.label}, which may rename files or make links, so the paths checked for it may lead elsewhere by the time it opens them; without the kernel sandbox htmcp checks each step against the files as they are when it runs: send them as separate calls.`,
        stage: changer.number,
      };
    }
    const joined = pipelines.length === 0 ? null : connector;
    pipelines.push(Object.freeze({ connector: joined, cwd, stages: Object.freeze(stages) }));
  }
  return { ok: true, plan: Object.freeze({ cwd, pipelines: Object.freeze(pipelines) }) };
}

function capitalise(text: string): string {
  return text.length === 0 ? text : text[0]?.toUpperCase() + text.slice(1);
}
