/**
 * The launcher argv: how one allowed command (or a plan of several) becomes
 * a contained (and, in bwrap mode, sandboxed) process tree. Pure.
 *
 * Why a helper at all: Deno can only signal its direct child, and
 * `Deno.kill(-pgid)` needs unscoped run permission. A process that calls
 * `setsid` or double-forks escapes any process-group kill. A PID namespace
 * contains them all: when its init dies, the kernel kills every process in
 * it, and the init's parent sees the init exit only after all of them are
 * reaped. Deno spawns one program, `htmcp-spawn` (built from
 * `spawn/htmcp_spawn.c` in this repository, verified by hash at startup),
 * once: the serving helper (`serving_helper.ts`), of which every call is a
 * fork that runs exactly this argv, doing in one process what a chain of
 * six system tools did before:
 *
 * ```
 * htmcp-spawn --pidns=root|user     setsid, PR_SET_PDEATHSIG, closes every fd
 *   [--setuid=U --setgid=G]         above 2, creates the PID namespace (as
 *   --backstop-ms=N                 non-root inside a user namespace mapping
 *   [--rlimit=...]                  only the server's uid), forks its init and
 *   -- COMMAND ARGS                 waits: SIGALRM/SIGTERM (our kill request)
 *                                   or its backstop SIGKILL the init.
 *   [ns init, pid 1]                drops to U/G (groups cleared), sets its
 *                                   own parent-death signal, forks:
 *     COMMAND ARGS (pid 2)          after rlimits, no_new_privs, default
 *                                   signals, fds above 2 closed
 *
 * bwrap mode: ... --init-exec --copy-in=/etc/passwd ... -- bwrap ... -- COMMAND ARGS
 *   (the init opens the /etc files bwrap copies in, as the command's uid,
 *   then execs bwrap itself, which runs the command at pid 2); with
 *   rlimits to set, or a plan to run, the helper is bound read-only into the
 *   jail and runs again there, after bwrap:
 *   ... -- bwrap ... --ro-bind HELPER /dev/.htmcp-spawn
 *   -- /dev/.htmcp-spawn --inner [--rlimit=...] (-- COMMAND ARGS | --plan)
 * ```
 *
 * The outer namespace stays in bwrap mode: bwrap's outer process exits as
 * soon as the command does, while its init may still be reaping a daemon, so
 * only an init that is the helper's child makes "the launcher exited" mean
 * "every process is reaped".
 *
 * Not Deno's `detached: true`: it makes Deno fork its whole (large) process
 * to call setsid before exec, 2-3 ms per call on a 2-core VM; the helper
 * calls setsid itself as its first step.
 *
 * Deno's run permission sees only the helper; everything after it is fixed
 * here, and the command is the policy-resolved absolute path.
 *
 * @module
 */
import type { Limits, Policy } from "../config/types.ts";
import {
  buildBwrapArgs,
  CPU_HARD_GRACE_SECONDS,
  ETC_COPIES,
  type HostLayout,
  type RunAsIdentity,
  UNKNOWN_LAYOUT,
} from "../sandbox/mod.ts";
import { DEFAULT_HELPER_PATH, HELPER_MANIFEST, HELPER_SOURCE } from "./spawn/helper.ts";
import { type CommandPlan, encodePlan } from "./plan.ts";

/** Absolute paths of the launcher helper and of bubblewrap. */
export interface LauncherTools {
  /** `htmcp-spawn`, built by `deno task build-launcher`. */
  readonly spawn: string;
  /** bubblewrap, the kernel sandbox the helper's init execs in bwrap mode. */
  readonly bwrap: string;
}

/** The helper from this checkout's build, and Debian's bubblewrap. */
export const DEFAULT_LAUNCHER_TOOLS: LauncherTools = Object.freeze({
  spawn: DEFAULT_HELPER_PATH,
  bwrap: "/usr/bin/bwrap",
});

/**
 * Where the helper is bound (read-only) inside the sandbox, so a plan runs in
 * the jail's view of the files. Under bwrap's own `/dev` tmpfs: no jail can
 * be there (`jailRootRefusal`), so the bind never creates a file in the jail.
 */
export const SANDBOX_HELPER_PATH = "/dev/.htmcp-spawn";

/**
 * Where the egress proxy's Unix socket is bound (read-only: connecting to a
 * socket needs no write on the mount) inside the sandbox, beside the helper.
 */
export const SANDBOX_EGRESS_SOCKET = "/dev/.htmcp-egress.sock";

/**
 * The loopback port the in-sandbox forwarder listens on. The sandbox has a
 * network namespace of its own, so no host service can hold this port, and
 * nothing but the forwarder listens there.
 */
export const SANDBOX_PROXY_PORT = 3128;

/** The proxy URL commands see in `HTTP_PROXY` and friends. */
export const SANDBOX_PROXY_URL = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;

/**
 * The programs the server itself spawns: only the helper, which starts
 * everything else. Pure, so the permission set can be built without starting
 * an executor (and paying for its probes).
 *
 * @param tools Where the helper and bubblewrap are (default: this checkout's build).
 * @returns The paths `--allow-run` must list: the helper alone.
 */
export function launcherPaths(tools: LauncherTools = DEFAULT_LAUNCHER_TOOLS): string[] {
  return [tools.spawn];
}

/**
 * The files the executor reads at startup to verify the helper: the build's
 * manifest and the helper's source (when shipped). Pure.
 *
 * @returns The paths `--allow-read` must list for `verifyHelper`.
 */
export function launcherReadPaths(): string[] {
  return [HELPER_MANIFEST, HELPER_SOURCE].filter((path) => path !== "");
}

/**
 * How the server may create the PID namespace: `"root"` (it holds
 * CAP_SYS_ADMIN: `unshare(CLONE_NEWPID)`) or `"user"` (inside a user
 * namespace of its own that maps only its uid).
 */
export type NamespacePrivilege = "root" | "user";

/** A uid and gid to run commands as (chosen at startup by `chooseRunAs`). */
export type RunAs = RunAsIdentity;

/** Everything fixed at startup that shapes every call's argv. */
export interface LaunchPlan {
  /** `"bwrap"`: the command runs inside the kernel sandbox; `"none"`: containment only. */
  readonly mode: "none" | "bwrap";
  /** How the helper creates the PID namespace (its `--pidns=`). */
  readonly privilege: NamespacePrivilege;
  /** True when the server runs as uid 0 (then `runAs` is never null). */
  readonly serverIsRoot: boolean;
  /**
   * The identity commands run as, chosen at startup by the executor
   * (`chooseRunAs`), or null to keep the server's (a non-root server, mapped
   * in its user namespace). The namespace's init clears supplementary
   * groups, then sets gid and uid, after the namespace exists (creating it
   * needs root), in every mode; bwrap maps the same identity inside.
   */
  readonly runAs: RunAs | null;
  /** The helper and bubblewrap the argv names. */
  readonly tools: LauncherTools;
  /** The helper's own deadline, a backstop should the server's timer never fire. */
  readonly backstopMs: number;
  /** The policy's limits; their rlimits become the helper's `--rlimit` options. */
  readonly limits: Limits;
  /** Which system folders are symlinks into `/usr` (bwrap mode); default: unknown. */
  readonly layout?: HostLayout;
  /**
   * `[sandbox] network = "allowlist"`: the host path of the egress proxy's
   * Unix socket, bound into the sandbox, whose only route out it is.
   */
  readonly egressSocket?: string;
}

/** The proxy variables every command gets while the egress proxy is in force. */
export function proxyEnvironment(): Record<string, string> {
  const url = SANDBOX_PROXY_URL;
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url };
}

/** The uid/gid `plan` runs commands as, or null for the server's own. */
export function effectiveRunAs(plan: LaunchPlan): RunAs | null {
  return plan.runAs;
}

/** What to run: the policy-resolved binary, its argv, and the cwd. */
export interface LaunchTarget {
  /** The absolute path the policy resolved (never looked up on PATH again). */
  readonly path: string;
  /** The arguments after the command word, verbatim. */
  readonly args: readonly string[];
  /** The jail-confined real path the command starts in. */
  readonly cwd: string;
  /**
   * The command's environment, when the helper is spawned with
   * `chainEnvironment(plan, env)`: it decides whether bwrap must remove
   * `LC_ALL` again. Without it the launcher adds nothing to the environment.
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Whether the command waits for the server's go byte on stdin (written
   * once the call's attempt record is durable): `stdin` when stdin text
   * follows it, `null` when the command then reads /dev/null. Absent: it
   * starts at once.
   */
  readonly go?: "stdin" | "null";
}

/** The locale variable bwrap runs under, and its value. */
const TOOL_LOCALE: readonly [string, string] = ["LC_ALL", "C"];

/**
 * True when bwrap gets `LC_ALL=C`: bwrap mode (bwrap can remove a variable by
 * name before the command starts) and a command environment without an
 * `LC_ALL` of its own.
 */
function toolsInCLocale(plan: LaunchPlan, env: Readonly<Record<string, string>> | undefined) {
  return plan.mode === "bwrap" && env !== undefined && !Object.hasOwn(env, TOOL_LOCALE[0]);
}

/**
 * The environment to spawn the helper with, for a command whose environment
 * is `env`. In bwrap mode bwrap also gets `LC_ALL=C`, which it removes
 * (`--unsetenv LC_ALL`, a name on argv, never a value) before the command
 * starts, so the command's environment is exactly `env`. Why: with a real
 * locale in `LANG` bwrap loads a dozen locale files at startup (about
 * 0.15 ms each here) only for error messages, which `classify.ts` reads more
 * reliably in English anyway.
 *
 * @param plan The launch plan.
 * @param env The command's environment (the policy's child env and hardening).
 * @returns The environment for `Deno.Command`; pass `env` on to `buildLaunchArgv` too.
 */
export function chainEnvironment(
  plan: LaunchPlan,
  env: Readonly<Record<string, string>>,
): Record<string, string> {
  // The proxy settings win over any the policy passes through: the proxy is
  // the sandbox's only route, and a stale host proxy would lead nowhere.
  const proxied = plan.egressSocket === undefined ? env : { ...env, ...proxyEnvironment() };
  if (!toolsInCLocale(plan, proxied)) return { ...proxied };
  return { ...proxied, [TOOL_LOCALE[0]]: TOOL_LOCALE[1] };
}

/**
 * The helper's `--rlimit` options for `limits`. Soft and hard values are
 * equal (the command cannot raise them back), except CPU, whose hard limit
 * is one second later: SIGXCPU first lets a well-behaved program stop,
 * SIGKILL then ends one that ignores it. The kernel applies them to the
 * command and everything it starts.
 *
 * @param limits The policy's limits (a null rlimit is left as inherited).
 * @returns `--rlimit=NAME=SOFT:HARD` options, one per rlimit set.
 *
 * @example
 * ```ts
 * import type { Limits } from "../config/types.ts";
 * import { rlimitOptions } from "./launcher.ts";
 * declare const limits: Limits;
 * rlimitOptions({ ...limits, cpuSeconds: 30, maxProcesses: null }); // ["--rlimit=cpu=30:31", ...]
 * ```
 */
export function rlimitOptions(limits: Limits): string[] {
  const out: string[] = [];
  const both = (name: string, value: number) => out.push(`--rlimit=${name}=${value}:${value}`);
  if (limits.cpuSeconds !== null) {
    out.push(`--rlimit=cpu=${limits.cpuSeconds}:${limits.cpuSeconds + CPU_HARD_GRACE_SECONDS}`);
  }
  if (limits.addressSpaceBytes !== null) both("as", limits.addressSpaceBytes);
  if (limits.maxProcesses !== null) both("nproc", limits.maxProcesses);
  if (limits.fileSizeBytes !== null) both("fsize", limits.fileSizeBytes);
  if (limits.openFiles !== null) both("nofile", limits.openFiles);
  return out;
}

/** What the innermost helper runs: one command, or a plan read from stdin. */
type Payload = {
  readonly kind: "command";
  readonly argv: readonly string[];
  readonly go?: "stdin" | "null" | undefined;
} | {
  readonly kind: "plan";
};

function buildArgv(
  plan: LaunchPlan,
  policy: Policy,
  cwd: string,
  env: Readonly<Record<string, string>> | undefined,
  payload: Payload,
): string[] {
  const { tools } = plan;
  const head = [tools.spawn, `--pidns=${plan.privilege}`];
  const runAs = effectiveRunAs(plan);
  if (runAs !== null) head.push(`--setuid=${runAs.uid}`, `--setgid=${runAs.gid}`);
  head.push(`--backstop-ms=${Math.max(1, Math.round(plan.backstopMs))}`);
  const inner = [...rlimitOptions(plan.limits)];
  const egress = plan.mode === "bwrap" && plan.egressSocket !== undefined;
  // The forwarder: the inner helper listens on the sandbox's loopback and
  // relays each connection to the proxy's socket (htmcp_spawn.c says why
  // it needs no trust).
  if (egress) inner.unshift(`--egress=${SANDBOX_PROXY_PORT}:${SANDBOX_EGRESS_SOCKET}`);
  // The go is awaited by the process that executes the command: the
  // namespace's child (mode none), the inner helper, or the init right
  // before it executes bwrap when bwrap runs the command itself.
  const go = payload.kind === "command" && payload.go !== undefined
    ? [payload.go === "null" ? "--go-null" : "--go"]
    : [];
  if (payload.kind === "plan") inner.push("--plan");
  else inner.push(...go, "--", ...payload.argv);
  if (plan.mode === "none") return [...head, ...inner];
  const unset = toolsInCLocale(plan, env) ? ["--unsetenv", TOOL_LOCALE[0]] : [];
  const bwrap = [
    ...head,
    "--init-exec",
    // In ETC_COPIES' order: the init opens them at the descriptors
    // buildBwrapArgs names in its `--file` operations.
    ...ETC_COPIES.map((file) => `--copy-in=${file}`),
    "--",
    tools.bwrap,
    ...buildBwrapArgs(policy, { cwd, runAs: plan.runAs }, plan.layout ?? UNKNOWN_LAYOUT),
    ...(egress ? ["--ro-bind", plan.egressSocket as string, SANDBOX_EGRESS_SOCKET] : []),
  ];
  if (!needsInnerHelper(plan, payload)) {
    // One exec less: bwrap itself sets no_new_privs and inherits no stray
    // descriptor (the helper closed them before exec'ing it), so with no
    // rlimit to set there is nothing left for the inner helper to do.
    // Here `inner` is [...go, "--", ...argv]: the go moves to the init.
    return [
      ...head,
      ...go,
      ...bwrap.slice(head.length),
      ...unset,
      "--",
      ...inner.slice(go.length + 1),
    ];
  }
  return [
    ...bwrap,
    "--ro-bind",
    tools.spawn,
    SANDBOX_HELPER_PATH,
    ...unset,
    "--",
    SANDBOX_HELPER_PATH,
    "--inner",
    ...inner,
  ];
}

/** True when bwrap must run the helper again inside: rlimits, a plan, or the egress forwarder. */
function needsInnerHelper(plan: LaunchPlan, payload: Payload): boolean {
  return payload.kind === "plan" || rlimitOptions(plan.limits).length > 0 ||
    plan.egressSocket !== undefined;
}

/**
 * The contained argv for one command: `[head, ...rest]`; the call runs as
 * `head` (`tools.spawn`) would with `rest` (a fork of the serving helper
 * handed `rest`). Pure, so the exact argv is testable without running
 * anything.
 *
 * @param plan The launch plan fixed at startup.
 * @param policy The loaded policy (bwrap's binds come from it).
 * @param target The command, its arguments and cwd.
 * @returns The argv, helper first; the command is its last words.
 *
 * @example
 * ```ts
 * import type { Policy } from "../config/types.ts";
 * import { buildLaunchArgv, type LaunchPlan } from "./launcher.ts";
 * declare const plan: LaunchPlan;
 * declare const policy: Policy;
 * const [head, ...rest] = buildLaunchArgv(plan, policy, {
 *   path: "/usr/bin/ls",
 *   args: ["-la"],
 *   cwd: policy.jailRoot,
 * });
 * new Deno.Command(head!, { args: rest });
 * ```
 */
export function buildLaunchArgv(plan: LaunchPlan, policy: Policy, target: LaunchTarget): string[] {
  return buildArgv(plan, policy, target.cwd, target.env, {
    kind: "command",
    argv: [target.path, ...target.args],
    go: target.go,
  });
}

/**
 * The argv and stdin for running `commandPlan` in one containment: the
 * helper reads the plan (with its nonce) from stdin, so neither appears on
 * argv, where `/proc/PID/cmdline` would show it to every local user.
 *
 * @param plan The launch plan fixed at startup.
 * @param policy The loaded policy (the jail root and bwrap's binds).
 * @param commandPlan The judged plan to run.
 * @param nonce This run's hex nonce, which the helper's status record must carry.
 * @param env The plan's environment, as for `LaunchTarget.env`.
 * @returns The helper's argv and the encoded plan for its stdin.
 * @throws {RangeError} When `commandPlan` or `nonce` is malformed (see `encodePlan`).
 */
export function buildPlanLaunch(
  plan: LaunchPlan,
  policy: Policy,
  commandPlan: CommandPlan,
  nonce: string,
  env?: Readonly<Record<string, string>>,
): { argv: string[]; stdin: Uint8Array } {
  return {
    argv: buildArgv(plan, policy, commandPlan.cwd, env, { kind: "plan" }),
    stdin: encodePlan(commandPlan, policy.jailRoot, nonce),
  };
}

/**
 * Every binary the launcher of `plan` executes before a single command, in
 * order (for `describe()`).
 *
 * @param plan The launch plan fixed at startup.
 * @returns The helper, then bubblewrap and the inner helper when they run.
 */
export function chainTools(plan: LaunchPlan): string[] {
  const { tools } = plan;
  if (plan.mode === "none") return [tools.spawn];
  const inner = needsInnerHelper(plan, { kind: "command", argv: [] });
  return inner ? [tools.spawn, tools.bwrap, SANDBOX_HELPER_PATH] : [tools.spawn, tools.bwrap];
}
