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
  readonly name: string;
  readonly rule: string;
}

/**
 * The enabled guards that apply to an allowlisted command.
 *
 * @param policy The loaded policy.
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
