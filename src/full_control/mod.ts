/**
 * Full-control mode: bash text inside the kernel sandbox, with the
 * denylist still applied to each simple command (best effort, pure).
 *
 * @module
 */
export { type ShellWord, type SplitResult, splitSimpleCommands } from "./split.ts";
export { judgeShellText, type ShellJudgement, type ShellPolicy } from "./judge.ts";
// The argument rules `ShellPolicy` names, so the surface is complete.
export type { ArgRule } from "../config/types.ts";
export {
  FULL_CONTROL_NOTICE,
  FULL_CONTROL_RUN_DESCRIPTION,
  FULL_CONTROL_WARNING,
} from "./notice.ts";
