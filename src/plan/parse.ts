/**
 * The plan parser: tokens -> a typed `Plan`. Pure.
 *
 * Grammar (everything else is refused while lexing or here):
 *
 * ```
 * plan     := cd-head* pipeline (connector pipeline)* [";"]
 * cd-head  := "cd" WORD ("&&" | ";")        only before the first pipeline
 * pipeline := command ("|" command)*
 * command  := (WORD | redirect)+            at least one WORD
 * redirect := ("<" | ">" | ">>" | "2>" | "2>>") WORD | "2>&1" | ">&2"
 * connector:= "&&" | "||" | ";"
 * ```
 *
 * Why `cd` only at the head: every path of a later stage is judged before
 * anything runs, relative to the folder it will run in. A `cd` after a
 * pipeline could run or not depending on that pipeline's exit status
 * (`make || cd x && ls`), which a static judgment cannot know; at the head,
 * each `cd` is confined up front and cannot fail later but by a race.
 *
 * `VAR=value cmd` (an environment prefix) is refused with its own reason:
 * htmcp never takes environment variables from the command text.
 *
 * @module
 */

import { lexPlan, type Operator, type Token } from "../policy/mod.ts";
import type {
  CommandStage,
  Connector,
  Plan,
  PlanParseResult,
  PlanWord,
  Redirection,
  Step,
} from "./types.ts";

/** Bounds that keep a plan (and the work of judging it) small. */
export interface PlanLimits {
  /** Commands in the whole plan (all pipelines together). */
  readonly maxStages: number;
  /** Redirections in the whole plan. */
  readonly maxRedirections: number;
}

/** The bounds in force: a longer plan is refused before any of it is judged. */
export const PLAN_LIMITS: PlanLimits = Object.freeze({ maxStages: 16, maxRedirections: 32 });

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function refuse(reason: string, code: "POLICY_DENIED" | "PARSE_ERROR" = "PARSE_ERROR") {
  return { ok: false as const, code, reason };
}

function connectorOf(op: Operator): Connector | null {
  if (op.kind === "and") return "&&";
  if (op.kind === "or") return "||";
  if (op.kind === "semicolon") return ";";
  return null;
}

function isCdWord(word: PlanWord): boolean {
  return word.text === "cd" && !word.quoted;
}

/** One command's tokens -> a stage, or a refusal sentence. */
function buildStage(tokens: readonly Token[]): CommandStage | { reason: string; denied: boolean } {
  const words: PlanWord[] = [];
  const redirections: Redirection[] = [];
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index] as Token;
    if (token.type === "word") {
      words.push(token.word);
      continue;
    }
    const op = token.op;
    if (op.kind === "dup") {
      redirections.push(Object.freeze({ kind: "dup", fd: op.fd, to: op.to }));
      continue;
    }
    if (op.kind !== "read" && op.kind !== "write") {
      throw new RangeError("buildStage() got a connector token.");
    }
    const next = tokens[index + 1];
    if (next === undefined || next.type !== "word") {
      return {
        reason: `The redirection "${token.text}" is not followed by a file name.`,
        denied: false,
      };
    }
    index++;
    redirections.push(
      op.kind === "read"
        ? Object.freeze({ kind: "read", fd: 0, target: next.word })
        : Object.freeze({ kind: "write", fd: op.fd, append: op.append, target: next.word }),
    );
  }
  const first = words[0];
  if (first === undefined) {
    return { reason: "A redirection has no command to apply to.", denied: false };
  }
  if (!first.quoted && ASSIGNMENT.test(first.text)) {
    return {
      reason: `The command starts with "${first.text}", an environment assignment a shell would ` +
        `apply to the command; htmcp never takes environment variables from the command text.`,
      denied: true,
    };
  }
  return Object.freeze({ words: Object.freeze(words), redirections: Object.freeze(redirections) });
}

/**
 * Parses command text into a plan.
 *
 * @param raw The command text exactly as the client sent it (snapshotted).
 * @returns The plan, or `POLICY_DENIED` (shell syntax htmcp does not
 *   implement, a misplaced `cd`, an environment prefix, too many stages) /
 *   `PARSE_ERROR` (unbalanced quotes, an empty command between operators,
 *   a redirection without a file).
 * @throws {TypeError} When `raw` is not a string.
 *
 * @example
 * ```ts
 * import { parsePlan } from "./parse.ts";
 * const result = parsePlan("cd app && grep -rn TODO src | sort > todo.txt");
 * if (result.ok) console.log(result.plan.steps.length); // 2
 * ```
 */
export function parsePlan(raw: string): PlanParseResult {
  const lexed = lexPlan(raw);
  if (!lexed.ok) return lexed;
  const tokens = lexed.tokens;
  if (tokens.length === 0) return refuse("The command is empty.");

  // Split into steps at connectors, and each step into commands at pipes.
  const steps: { connector: Connector | null; step: Step }[] = [];
  let connector: Connector | null = null;
  let commands: Token[][] = [[]];
  let stageCount = 0;
  let redirectionCount = 0;
  let seenPipeline = false;

  const closeStep = (ending: string): string | { reason: string; denied: boolean } | null => {
    if (connector === "||" && steps[steps.length - 1]?.step.kind === "cd") {
      return { reason: `"cd DIR ||" is not supported; write "cd DIR && COMMAND".`, denied: true };
    }
    const last = commands[commands.length - 1] as Token[];
    if (last.length === 0) {
      return commands.length > 1
        ? `The pipe "|" has no command after it.`
        : `"${ending}" has no command before it.`;
    }
    const first = (commands[0] as Token[])[0];
    if (first !== undefined && first.type === "word" && isCdWord(first.word)) {
      if (commands.length > 1) {
        return {
          reason: `"cd" cannot be part of a pipeline; write "cd DIR && COMMAND".`,
          denied: true,
        };
      }
      if (seenPipeline) {
        return {
          reason: `"cd" may only start a command ("cd DIR && COMMAND"), not follow another ` +
            `command, since whether it runs would depend on that command's result.`,
          denied: true,
        };
      }
      if (connector === "||") {
        return { reason: `"|| cd" is not supported; write "cd DIR && COMMAND".`, denied: true };
      }
      const cdTokens = commands[0] as Token[];
      const dir = cdTokens[1];
      if (cdTokens.length !== 2 || dir === undefined || dir.type !== "word") {
        return {
          reason: `"cd" takes exactly one folder and no redirection ("cd DIR"); ` +
            `"cd" alone and "cd -" are not supported.`,
          denied: true,
        };
      }
      if (dir.word.text === "-" && !dir.word.quoted) {
        return { reason: `"cd -" is not supported; name the folder.`, denied: true };
      }
      if (dir.word.globAt.length > 0) {
        return { reason: `"cd" takes a folder written out, not a pattern.`, denied: true };
      }
      steps.push({ connector, step: Object.freeze({ kind: "cd", dir: dir.word }) });
      return null;
    }
    const stages: CommandStage[] = [];
    for (const command of commands) {
      const stage = buildStage(command);
      if ("reason" in stage) return stage;
      if (stage.words[0] !== undefined && isCdWord(stage.words[0])) {
        return {
          reason: `"cd" cannot be part of a pipeline; write "cd DIR && COMMAND".`,
          denied: true,
        };
      }
      stages.push(stage);
      stageCount++;
      redirectionCount += stage.redirections.length;
    }
    if (stageCount > PLAN_LIMITS.maxStages) {
      return {
        reason:
          `The command has more than ${PLAN_LIMITS.maxStages} commands; split it into several calls.`,
        denied: true,
      };
    }
    if (redirectionCount > PLAN_LIMITS.maxRedirections) {
      return {
        reason: `The command has more than ${PLAN_LIMITS.maxRedirections} redirections.`,
        denied: true,
      };
    }
    seenPipeline = true;
    steps.push({
      connector,
      step: Object.freeze({
        kind: "pipeline",
        pipeline: Object.freeze({ stages: Object.freeze(stages) }),
      }),
    });
    return null;
  };

  const fail = (problem: string | { reason: string; denied: boolean }) =>
    typeof problem === "string"
      ? refuse(problem)
      : refuse(problem.reason, problem.denied ? "POLICY_DENIED" : "PARSE_ERROR");

  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index] as Token;
    if (token.type === "op" && token.op.kind === "pipe") {
      if ((commands[commands.length - 1] as Token[]).length === 0) {
        return refuse(`The pipe "|" has no command before it.`);
      }
      commands.push([]);
      continue;
    }
    const joined = token.type === "op" ? connectorOf(token.op) : null;
    if (joined === null || token.type !== "op") {
      (commands[commands.length - 1] as Token[]).push(token);
      continue;
    }
    const problem = closeStep(token.text);
    if (problem !== null) return fail(problem);
    connector = joined;
    commands = [[]];
    // A single trailing ";" ends the text as a shell allows; "&&"/"||" need a command.
    if (index === tokens.length - 1 && joined === ";") {
      connector = null;
      break;
    }
    if (index === tokens.length - 1) return refuse(`"${token.text}" has no command after it.`);
  }
  if (connector !== null || (commands[0] as Token[]).length > 0) {
    const problem = closeStep("end");
    if (problem !== null) return fail(problem);
  }
  const lastStep = steps[steps.length - 1];
  if (lastStep === undefined) return refuse("The command is empty.");
  if (lastStep.step.kind === "cd" && steps.length > 1) {
    return refuse(
      `The command ends with "cd"; a folder change is kept only as the whole command ` +
        `("cd DIR" alone, in a session).`,
      "POLICY_DENIED",
    );
  }
  return { ok: true, plan: Object.freeze({ steps: Object.freeze(steps) }) };
}

/** True when the plan is one command with no redirection and no glob: today's plain call. */
export function isSimpleCommand(plan: Plan): boolean {
  if (plan.steps.length !== 1) return false;
  const only = plan.steps[0]?.step;
  if (only === undefined || only.kind !== "pipeline") return false;
  const [stage, ...rest] = only.pipeline.stages;
  return stage !== undefined && rest.length === 0 && stage.redirections.length === 0 &&
    stage.words.every((word) => word.globAt.length === 0);
}
