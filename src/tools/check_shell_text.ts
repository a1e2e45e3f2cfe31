/**
 * The full-control check of `run_command`/`explain_command` text: the
 * denylist and rules on every simple command (`judgeShellText`), the cwd in
 * the jail, then one run specification, `bash -c TEXT`, exactly what the
 * audit records and the executor runs. No path check: in this mode the
 * kernel sandbox's mount namespace is the jail (the server refuses to start
 * without it), since a shell's paths cannot be known before it runs.
 *
 * @module
 */
import { findPromptHit } from "../policy/mod.ts";
import type { FullControlSettings, Policy } from "../config/types.ts";
import { judgeShellText } from "../full_control/mod.ts";
import { confineCwd } from "../jail/mod.ts";
import type { CheckResult } from "./check_result.ts";

/**
 * Judges bash `text` for full-control mode.
 *
 * @param policy The loaded policy.
 * @param mode Its full-control settings (the resolved shell).
 * @param text The command text, already snapshotted.
 * @param requestedCwd The cwd the caller asked for (undefined = jail root).
 */
export async function checkShellText(
  policy: Policy,
  mode: FullControlSettings,
  text: string,
  requestedCwd: string | undefined,
): Promise<CheckResult> {
  // The exact argv that runs: the shell's resolved path, -c, the text.
  const argv = [mode.shell.path, "-c", text];
  const judged = judgeShellText(policy, text);
  if (!judged.ok) {
    return { ok: false, code: judged.code, reason: judged.reason, argv, cwd: null };
  }
  const cwd = await confineCwd(policy.jailRoot, requestedCwd);
  if (!cwd.ok) return { ok: false, code: cwd.code, reason: cwd.reason, argv, cwd: null };
  const names = [...new Set(judged.commands.map((words) => words[0] ?? ""))].join(", ");
  return {
    ok: true,
    argv,
    run: {
      path: mode.shell.path,
      args: ["-c", text],
      // The host's home does not exist in the sandbox; tools that keep
      // caches and settings under $HOME (npm, pip, git) get the jail.
      env: { HOME: policy.jailRoot },
    },
    command: mode.shell,
    cwd: cwd.value,
    reason: `Allowed (full-control mode): bash runs the text in the kernel sandbox; ` +
      `no simple command in it is denylisted${names === "" ? "" : ` (${names})`}.`,
    ruleWarnings: [],
    // Prompt rules on each simple command's first word, as the denylist is
    // applied: best effort, since bash may run words no parser here sees.
    prompts: judged.commands.flatMap((words) => {
      const hit = findPromptHit(words[0] ?? "", words.slice(1), policy.rules);
      return hit === null ? [] : [{
        command: hit.rule.command,
        entry: hit.entry,
        justification: hit.rule.justification ?? hit.rule.reason,
      }];
    }),
    plan: null,
  };
}
