/**
 * `htmcp policy lint`: findings an operator should read before trusting a
 * policy, each with a severity and the fix. Pure: the loaded policy in, a
 * list of findings out (the loader already resolved every command).
 *
 * What it looks for: code-running programs on the allowlist (interpreters,
 * build tools, package managers), allowlisted programs with a known escape
 * and no built-in guard, names both allowed and denied, rules that can never
 * match, guards switched off, secret-looking `[env] pass` names, a jail that
 * is `/`, a system folder or a home folder, and the switches that turn a
 * layer off (path confinement, redaction, the kernel sandbox).
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { GUARDS, isInterpreter } from "../policy/mod.ts";
import { isSecretKeyName } from "../redact/secret_key_names.ts";

/** How much a finding matters: `high` weakens a layer, `warning` is likely a mistake. */
export type LintSeverity = "high" | "warning" | "info";

/** One finding. */
export interface LintFinding {
  /** How much it matters; `htmcp policy lint` fails on `high`. */
  readonly severity: LintSeverity;
  /** A stable identifier (`interpreter-allowlisted`, ...), for scripts. */
  readonly id: string;
  /** What is wrong, in one sentence naming the entry. */
  readonly message: string;
  /** What to change in `policy.toml`, in one sentence. */
  readonly fix: string;
}

/**
 * Programs with a documented way to run commands or write files that no
 * built-in guard models (GTFOBins "shell" / "file write" entries among
 * common tools). Allowlisting one hands the model that escape.
 */
// deno-fmt-ignore
const KNOWN_ESCAPES: ReadonlyMap<string, string> = new Map([
  ["less", "runs a shell with !cmd and opens an editor with v"],
  ["more", "runs a shell with !cmd"],
  ["man", "runs its pager, which runs a shell"],
  ["vi", "runs a shell with :!cmd"], ["vim", "runs a shell with :!cmd"],
  ["nvim", "runs a shell with :!cmd"], ["view", "runs a shell with :!cmd"],
  ["ed", "runs a shell with !cmd"], ["ex", "runs a shell with :!cmd"],
  ["nano", "runs a command with ^R^X"], ["emacs", "runs a shell with M-x shell"],
  ["watch", "runs any command it is given"], ["script", "runs a shell"],
  ["expect", "runs Tcl code"], ["gdb", "runs a shell with !cmd and python code"],
  ["strace", "runs any command it is given"], ["ltrace", "runs any command it is given"],
  ["busybox", "contains a shell and every applet"], ["openssl", "reads and writes any file"],
  ["socat", "connects a shell to a socket"], ["zip", "runs a command with -TT"],
  ["rsync", "runs a remote shell with -e"], ["scp", "runs a program with -S"],
  ["tee", "writes any file it is given"], ["dd", "reads and writes devices"],
  ["crontab", "schedules commands"], ["at", "schedules commands"],
  ["systemd-run", "runs a command as a service"], ["flock", "runs any command it is given"],
  ["stdbuf", "runs any command it is given"], ["unbuffer", "runs any command it is given"],
]);

/** Folders that must never be a jail: the whole system, or a system tree. */
const SYSTEM_FOLDERS: ReadonlySet<string> = new Set([
  "/",
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib64",
  "/proc",
  "/root",
  "/run",
  "/sbin",
  "/sys",
  "/usr",
  "/var",
  "/home",
]);

function guardedNames(policy: Policy): Set<string> {
  const names = new Set<string>();
  for (const guard of GUARDS) {
    if (policy.disabledGuards.has(guard.name)) continue;
    for (const command of guard.commands) names.add(command);
  }
  return names;
}

function isHomeFolder(path: string, home: string | undefined): boolean {
  if (home !== undefined && home !== "" && path === home.replace(/\/+$/, "")) return true;
  return /^\/home\/[^/]+$/.test(path) || path === "/root";
}

/**
 * Lints a loaded policy.
 *
 * @param policy The loaded policy.
 * @param home The operator's home folder (`HOME`), to flag a jail that is it.
 * @returns Findings, most severe first; empty when there is nothing to say.
 *
 * @example
 * ```ts
 * import { lintPolicy } from "./lint.ts";
 * declare const policy: import("../config/types.ts").Policy;
 * for (const finding of lintPolicy(policy)) console.log(finding.severity, finding.message);
 * ```
 */
export function lintPolicy(policy: Policy, home?: string): LintFinding[] {
  const findings: LintFinding[] = [];
  const add = (severity: LintSeverity, id: string, message: string, fix: string) =>
    findings.push(Object.freeze({ severity, id, message, fix }));
  const allowed = [...policy.allowlist.keys()];
  const guarded = guardedNames(policy);
  const denied = new Set([...policy.denylist].map((name) => name.toLowerCase()));

  for (const name of allowed) {
    if (isInterpreter(name)) {
      add(
        "high",
        "interpreter-allowlisted",
        `"${name}" is allowlisted and runs any code it is given (interpreter, build tool or package manager): the policy cannot see that code.`,
        `Remove "${name}", or keep it only with [sandbox] mode = "bwrap" and say so in a [[tests]] entry.`,
      );
    }
    // A launcher, shell or pager the built-in guards refuse as a whole: on the
    // allowlist it only looks allowed (and says the author expected it to run).
    const alwaysRefused = GUARDS.find((guard) =>
      !policy.disabledGuards.has(guard.name) && guard.commands.includes(name) &&
      guard.match.some((match) => match.kind === "command")
    );
    if (alwaysRefused !== undefined) {
      add(
        "warning",
        "always-refused",
        `"${name}" is allowlisted, but the built-in guard "${alwaysRefused.name}" refuses it whatever its arguments (it ${alwaysRefused.reason}).`,
        `Remove "${name}" from the allowlist; it can never run.`,
      );
    }
    const escape = KNOWN_ESCAPES.get(name);
    if (escape !== undefined && !guarded.has(name)) {
      add(
        "high",
        "unguarded-escape",
        `"${name}" is allowlisted and ${escape}; no built-in guard covers it.`,
        `Remove "${name}" from the allowlist, or add a [[rules]] entry for its escape.`,
      );
    }
    if (denied.has(name.toLowerCase())) {
      add(
        "warning",
        "allowed-and-denied",
        `"${name}" is on both the allowlist and the denylist; the denylist wins, so it never runs.`,
        `Remove "${name}" from one of the two lists.`,
      );
    }
  }
  // (A rule for a command that is not allowlisted already stops the loader.)
  for (const rule of policy.rules) {
    if (denied.has(rule.command.toLowerCase())) {
      add(
        "warning",
        "rule-never-matches",
        `The [[rules]] entry for "${rule.command}" can never apply: "${rule.command}" is denylisted, so it never runs.`,
        `Remove the rule, or take "${rule.command}" off the denylist if it should run.`,
      );
    }
  }
  for (const name of policy.disabledGuards) {
    add(
      "warning",
      "guard-disabled",
      `The built-in guard "${name}" is disabled.`,
      `Remove "${name}" from [guards] disable unless you rely on what it refuses.`,
    );
  }
  for (const name of policy.envPass) {
    if (isSecretKeyName(name)) {
      add(
        "high",
        "secret-env-passed",
        `[env] pass hands "${name}" to every command; its name looks like a secret.`,
        `Remove "${name}" from [env] pass; commands that need a credential should read it from a file inside the jail.`,
      );
    }
  }
  if (SYSTEM_FOLDERS.has(policy.jailRoot) || isHomeFolder(policy.jailRoot, home)) {
    add(
      "high",
      "jail-too-wide",
      `The jail "${policy.jailRoot}" is the whole system, a system folder or a home folder.`,
      `Point jail_root at a folder that holds only the project the model may work on.`,
    );
  }
  if (!policy.confineArgs) {
    add(
      "high",
      "path-confinement-off",
      `[paths] confine_args is false: arguments naming paths outside the jail are not refused.`,
      `Set [paths] confine_args = true.`,
    );
  }
  if (!policy.redaction.enabled) {
    add(
      "high",
      "redaction-off",
      `[redaction] enabled is false: secrets in command output reach the model.`,
      `Set [redaction] enabled = true.`,
    );
  }
  if (policy.sandbox.mode === "none") {
    add(
      "high",
      "sandbox-off",
      `[sandbox] mode is "none": the jail is a path check only, not a kernel boundary.`,
      `Set [sandbox] mode = "bwrap" (install bubblewrap).`,
    );
  }
  if (policy.tests.length === 0) {
    add(
      "info",
      "no-policy-tests",
      `The policy has no [[tests]] entries, so nothing checks its verdicts at startup.`,
      `Add [[tests]] entries with commands that must run (expect = "OK") and must not.`,
    );
  }
  const order: Record<LintSeverity, number> = { high: 0, warning: 1, info: 2 };
  return findings.sort((a, b) => order[a.severity] - order[b.severity]);
}
