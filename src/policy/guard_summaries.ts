/**
 * The active guards described for `describe_policy`, so a model knows in
 * advance which arguments will be refused instead of learning by trial.
 *
 * @module
 */

import type { Policy } from "../config/types.ts";
import { basenameOf } from "./command_word.ts";
import { guardAppliesTo } from "./guard_check.ts";
import { GUARDS } from "./guards.ts";

/** One active guard, in words. */
export interface GuardSummary {
  /** The guard's stable name, as `[guards] disable` and refusals spell it. */
  readonly name: string;
  /** One sentence naming the commands and what the guard refuses in them. */
  readonly rule: string;
}

/**
 * The enabled guards that apply to an allowlisted command.
 *
 * `describe_policy` lists these so a model can avoid a refusal instead of
 * provoking it; the sentences are built from the guards' own reasons, so
 * they cannot drift from what is enforced.
 *
 * @param policy The loaded policy.
 * @returns One summary per enabled guard that names an allowlisted command
 * (by name or by the basename of its real path), in check order.
 */
export function activeGuardSummaries(policy: Policy): GuardSummary[] {
  const names = [...policy.allowlist.values()].flatMap((command) => [
    command.name,
    basenameOf(command.realPath),
  ]);
  return GUARDS.filter((guard) =>
    !policy.disabledGuards.has(guard.name) && guardAppliesTo(guard, names)
  ).map((guard) => {
    const commands = guard.commands.filter((command) => names.includes(command));
    const subject = commands.map((command) => `"${command}"`).join(", ");
    const whole = guard.match.every((match) => match.kind === "command");
    return {
      name: guard.name,
      rule: whole
        ? `${subject} is refused: it ${guard.reason}.`
        : `${subject} is refused when used in a way that ${guard.reason}.`,
    };
  });
}
