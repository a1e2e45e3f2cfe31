/**
 * The launcher chain: the argv that turns one allowed command into a
 * contained (and, in bwrap mode, sandboxed) process tree. Pure.
 *
 * Why a chain of small system tools instead of `Deno.Command` alone: Deno
 * can only signal its direct child, and `Deno.kill(-pgid)` needs unscoped
 * run permission. A process that calls `setsid` or double-forks escapes any
 * process-group kill. A PID namespace contains them all: when its init dies,
 * the kernel kills every process in it, and the init's parent sees the init
 * exit only after all of them are reaped. So:
 *
 * ```
 * unshare --pid                 children of the next process start a new PID
 *   [--setuid=U --setgid=G]     namespace; a root server also drops to the
 *                               run-as identity here, in every mode (one exec
 *                               less), so nothing after it holds root's uid
 *  setsid --wait                 a new session: no controlling terminal, and no
 *                                terminal signal (^C, ^Z, hangup) reaches the
 *                                chain or freezes timeout's backstop
 *   setpriv --pdeathsig KILL     dies if the server dies (SIGKILL included);
 *                                set after the uid change, which would clear it
 *    timeout --foreground -s KILL  parent of that namespace's init. On SIGALRM
 *                                  (our kill request) or its own backstop it
 *                                  SIGKILLs the init and waits for it: when it
 *                                  exits, the namespace is empty and reaped.
 *     [ns init] none:  setpriv --pdeathsig KILL --no-new-privs
 *                       timeout --foreground 0   a plain waiter
 *               bwrap: bwrap --die-with-parent ... --unshare-pid
 *                       (nested namespace; bwrap's own init reaps inside)
 *                       [--unsetenv LC_ALL]  see `chainEnvironment`
 *      prlimit ... --    rlimits (only when a limit is set)
 *       COMMAND ARGS     the allowlisted absolute path, argv verbatim
 * ```
 *
 * Why `setsid` here and not Deno's `detached: true`: `detached` makes Deno
 * fork its whole (large) process to call setsid before exec, 2-3 ms per call
 * on a 2-core VM; without it Deno uses a vfork-style spawn and the one small
 * `setsid` exec costs under 1 ms. The session is the same: the
 * process Deno spawned leads a new session with no controlling terminal.
 * One difference: until `setsid` runs (about 1 ms after the spawn) the
 * launcher is still in the server's process group, so a terminal signal sent
 * to that group in that instant reaches it before it has started anything:
 * ^C or a hangup ends it (the call reports that signal; nothing ran), ^Z
 * pauses it along with the server. `setsid` forks only when its caller already leads a process group, which a
 * child Deno spawns attached never does (Deno does not call setpgid), so the
 * chain stays one process down to `timeout`. Should it ever fork (someone
 * spawns this argv detached), `--wait` keeps the spawned process waiting for
 * the rest of the chain, and the fork lands in the new PID namespace, so the
 * containment probe, which every mode runs at startup and which expects the
 * command at pid 2, sees pid 3 and the server refuses to start.
 *
 * Each step is there because no other step can do its job (each exec costs
 * about 0.7-1 ms here): `timeout` alone turns a signal into "kill the child,
 * then keep waiting", `setpriv` alone sets a parent-death signal on the
 * process it runs in (`unshare --kill-child` sets it on a forked child, and
 * as an init turns a signalled command into exit 1), and the namespace's
 * init must set its own after `timeout`'s fork, so none mode needs a second
 * `setpriv` (which also carries `--no-new-privs`: moving that out would save
 * nothing). bwrap sets its own (`--die-with-parent`), which is why it can be
 * the init itself. The outer namespace stays in bwrap mode: bwrap's outer
 * process exits as soon as the command does, while its init may still be
 * reaping a daemon, so only an init that is `timeout`'s child makes "the
 * launcher exited" mean "every process is reaped".
 *
 * Deno's run permission sees only the first binary; everything after it is
 * fixed here, and the command is the policy-resolved absolute path.
 *
 * @module
 */
import type { Limits, Policy } from "../config/types.ts";
import {
  buildBwrapArgs,
  type HostLayout,
  rlimitPrefix,
  type RunAsIdentity,
  UNKNOWN_LAYOUT,
} from "../sandbox/mod.ts";

/** Absolute paths of the launcher tools (util-linux, coreutils, bubblewrap). */
export interface LauncherTools {
  readonly setpriv: string;
  readonly unshare: string;
  readonly setsid: string;
  readonly timeout: string;
  readonly prlimit: string;
  readonly bwrap: string;
}

/** Debian/Ubuntu locations: util-linux and coreutils are essential packages there. */
export const DEFAULT_LAUNCHER_TOOLS: LauncherTools = Object.freeze({
  setpriv: "/usr/bin/setpriv",
  unshare: "/usr/bin/unshare",
  setsid: "/usr/bin/setsid",
  timeout: "/usr/bin/timeout",
  prlimit: "/usr/bin/prlimit",
  bwrap: "/usr/bin/bwrap",
});

/**
 * The programs the server itself spawns: only the head of the chain, which
 * starts everything else. Pure, so the permission set can be built without
 * starting an executor (and paying for its probes).
 */
export function launcherPaths(tools: LauncherTools = DEFAULT_LAUNCHER_TOOLS): string[] {
  return [tools.unshare];
}

/**
 * How the server may create the PID namespace: `"root"` (it holds
 * CAP_SYS_ADMIN: `unshare --pid`) or `"user"` (inside a user namespace of its
 * own: `unshare --user --map-current-user --pid`).
 */
export type NamespacePrivilege = "root" | "user";

/** Everything fixed at startup that shapes every call's argv. */
export interface LaunchPlan {
  readonly mode: "none" | "bwrap";
  readonly privilege: NamespacePrivilege;
  /** True when the server runs as uid 0 (then `runAs` is never null). */
  readonly serverIsRoot: boolean;
  /**
   * The identity commands run as, chosen at startup by the executor
   * (`chooseRunAs`): a root server drops to it right after creating the PID
   * namespace, in every mode, and bwrap maps it to itself. Null keeps the
   * server's uid (a non-root server, mapped in its user namespace).
   */
  readonly runAs: RunAsIdentity | null;
  readonly tools: LauncherTools;
  /** `timeout`'s own deadline, a backstop should the server's timer never fire. */
  readonly backstopMs: number;
  readonly limits: Limits;
  /** Which system folders are symlinks into `/usr` (bwrap mode); default: unknown. */
  readonly layout?: HostLayout;
}

/** What to run: the policy-resolved binary, its argv, and the cwd. */
export interface LaunchTarget {
  readonly path: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /**
   * The command's environment, when the chain is spawned with
   * `chainEnvironment(plan, env)`: it decides whether bwrap must remove the
   * tools' `LC_ALL` again. Without it the chain adds nothing to the environment.
   */
  readonly env?: Readonly<Record<string, string>>;
}

/** The locale variable the tools before bwrap run under, and its value. */
const TOOL_LOCALE: readonly [string, string] = ["LC_ALL", "C"];

/**
 * True when the tools before bwrap get `LC_ALL=C`: bwrap mode (bwrap can
 * remove a variable by name before the command starts; the none chain has no
 * such step) and a command environment without an `LC_ALL` of its own.
 */
function toolsInCLocale(plan: LaunchPlan, env: Readonly<Record<string, string>> | undefined) {
  return plan.mode === "bwrap" && env !== undefined && !Object.hasOwn(env, TOOL_LOCALE[0]);
}

/**
 * The environment to spawn the chain with, for a command whose environment is
 * `env`. In bwrap mode the tools before bwrap also get `LC_ALL=C`, which
 * bwrap removes (`--unsetenv LC_ALL`, a name on argv, never a value) before
 * the command starts, so the command's environment is exactly `env`. Why:
 * with a real locale in `LANG` each of those tools loads a dozen locale files
 * at startup (about 0.15 ms each here) only for error messages, which
 * `classify.ts` then reads more reliably in English anyway.
 *
 * @param plan The launch plan.
 * @param env The command's environment (the policy's child env and hardening).
 * @returns The environment for `Deno.Command`; pass `env` on to `buildLaunchArgv` too.
 */
export function chainEnvironment(
  plan: LaunchPlan,
  env: Readonly<Record<string, string>>,
): Record<string, string> {
  if (!toolsInCLocale(plan, env)) return { ...env };
  return { ...env, [TOOL_LOCALE[0]]: TOOL_LOCALE[1] };
}

/** The contained argv: `[head, ...rest]`; Deno spawns `head` (`tools.unshare`) with `rest`. */
export function buildLaunchArgv(plan: LaunchPlan, policy: Policy, target: LaunchTarget): string[] {
  const { tools } = plan;
  const head = [tools.unshare];
  if (plan.privilege === "user") head.push("--user", "--map-current-user");
  head.push("--pid");
  if (plan.runAs !== null) {
    // unshare changes uid after creating the namespace (which needs root) and
    // clears supplementary groups with the gid change; leaving uid 0 also
    // clears every capability, and none mode's --no-new-privs keeps
    // setuid and file-capability binaries from giving any back.
    head.push(`--setuid=${plan.runAs.uid}`, `--setgid=${plan.runAs.gid}`);
  }
  head.push(
    "--",
    tools.setsid,
    "--wait",
    "--",
    tools.setpriv,
    "--pdeathsig",
    "KILL",
    "--",
    tools.timeout,
    "--foreground",
    "--signal=KILL",
    "--",
    formatSeconds(plan.backstopMs),
  );
  const command = [...rlimitPrefix(plan.limits, tools.prlimit), target.path, ...target.args];
  if (plan.mode === "none") {
    return [
      ...head,
      tools.setpriv,
      "--pdeathsig",
      "KILL",
      "--no-new-privs",
      "--",
      tools.timeout,
      "--foreground",
      "--",
      "0",
      ...command,
    ];
  }
  const unset = toolsInCLocale(plan, target.env) ? ["--unsetenv", TOOL_LOCALE[0]] : [];
  return [
    ...head,
    tools.bwrap,
    ...buildBwrapArgs(
      policy,
      { cwd: target.cwd, runAs: plan.runAs },
      plan.layout ?? UNKNOWN_LAYOUT,
    ),
    ...unset,
    "--",
    ...command,
  ];
}

/** Every tool the chain of `plan` executes, in order (for `describe()`). */
export function chainTools(plan: LaunchPlan): string[] {
  const { tools } = plan;
  const out = [tools.unshare, tools.setsid, tools.setpriv, tools.timeout];
  if (plan.mode === "none") out.push(tools.setpriv, tools.timeout);
  else out.push(tools.bwrap);
  if (rlimitPrefix(plan.limits, tools.prlimit).length > 0) out.push(tools.prlimit);
  return out;
}

/** `timeout` durations: seconds with millisecond precision. */
function formatSeconds(ms: number): string {
  return (Math.max(ms, 1) / 1000).toFixed(3);
}
