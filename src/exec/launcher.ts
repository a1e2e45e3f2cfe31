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
 * once: the serving helper (`serving_helper.ts`). It reads each call's
 * argv (this module's) as a spawn of it would, and creates the call's
 * namespace and its init in one clone(), so that every call's tree hangs
 * straight off it, doing in one process what a chain of six system tools
 * did before:
 *
 * ```
 * htmcp-spawn --pidns=root|user     the serving helper: creates the PID
 *   [--setuid=U --setgid=G]         namespace (as non-root inside a user
 *   --backstop-ms=N                 namespace mapping only the server's
 *   [--rlimit=...]                  uid) with its init, and waits: our
 *   -- COMMAND ARGS                 kill request or the call's backstop
 *                                   SIGKILL the init.
 *   [ns init, pid 1: htmcp-spawn    the helper executed anew: enters
 *    --as-init CWD OPTIONS ...]     CWD, a new session, drops to U/G
 *                                   (groups cleared), sets its own
 *                                   parent-death signal, vforks:
 *     COMMAND ARGS (pid 2)          after rlimits, no_new_privs, default
 *                                   signals, fds above 2 closed
 *
 * bwrap mode (`sandboxArgv`, the same for every call):
 *   htmcp-spawn --pidns=... [--setuid=U --setgid=G] --backstop-at-go
 *   --init-exec --copy-in=/etc/passwd ... -- bwrap ...
 *   --ro-bind HELPER /dev/.htmcp-spawn -- /dev/.htmcp-spawn --inner --request
 *   (the init opens the /etc files bwrap copies in, as the command's uid,
 *   then execs bwrap, which sets up the sandbox and runs the inner helper as
 *   pid 1 of its own namespace (`--as-pid-1`: the init, which forks the
 *   command at pid 2); that waits on stdin for the call's request, written only at the
 *   go: cwd, environment, `--inner [--egress=...] [--rlimit=...]` and
 *   `-- COMMAND ARGS` or `--plan`, so a sandbox can be made ahead of its
 *   call, `sandbox_ahead.ts`; the go also starts the call's backstop)
 * ```
 *
 * Our namespace stays in bwrap mode: bwrap's outer process exits as soon as
 * the command does, while its init may still be reaping a daemon, so only
 * an init that is the helper's child makes "the call was reaped" mean
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
import {
  BUNDLE_FOLDER,
  DEFAULT_HELPER_PATH,
  HELPER_MANIFEST,
  HELPER_SOURCE,
} from "./spawn/helper.ts";
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
 * The files the server reads to start its executor: the build's manifest
 * and the helper's source (when shipped), which `verifyHelper` reads, and a
 * bundled program's own folder, whose chunks it imports as it needs them
 * (`LAZY_DYNAMIC_IMPORTS`: nothing but the program's code). Pure.
 *
 * @returns The paths `--allow-read` must list.
 */
export function launcherReadPaths(): string[] {
  return [HELPER_MANIFEST, HELPER_SOURCE, BUNDLE_FOLDER].filter((path) => path !== "");
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
  /** The command's environment (before `chainEnvironment`); absent: empty. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Whether the command waits for the server's go (written once the call's
   * attempt record is durable): `stdin` when stdin text follows it, `null`
   * when the command then reads /dev/null. Absent: it starts at once. (In
   * bwrap mode the sandbox's request is the go either way.)
   */
  readonly go?: "stdin" | "null";
  /** Whether stdin text is written for the command (else it reads /dev/null). */
  readonly stdinText?: boolean;
}

/**
 * The command's environment as it starts: `env`, with the proxy variables
 * over it while the egress proxy is in force.
 *
 * @param plan The launch plan.
 * @param env The command's environment (the policy's child env and hardening).
 * @returns The environment the command gets, exactly.
 */
export function chainEnvironment(
  plan: LaunchPlan,
  env: Readonly<Record<string, string>>,
): Record<string, string> {
  // The proxy settings win over any the policy passes through: the proxy is
  // the sandbox's only route, and a stale host proxy would lead nowhere.
  return plan.egressSocket === undefined ? { ...env } : { ...env, ...proxyEnvironment() };
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
  readonly stdinText: boolean;
} | {
  readonly kind: "plan";
};

/**
 * What bubblewrap itself runs under in a sandbox made ahead: no variable of
 * the command's (those arrive with its request), and the C locale, in
 * which bwrap loads no locale file at startup (a real one in `LANG` cost a
 * dozen files, about 0.15 ms each) and prints the English errors
 * `classify.ts` reads.
 */
export const SANDBOX_TOOL_ENV: Readonly<Record<string, string>> = Object.freeze({ LC_ALL: "C" });

/**
 * The part of a bwrap-mode call that arrives only at its go, on the
 * sandbox's stdin (`htmcp-spawn --inner --request`): the command's working
 * folder, its whole environment, and the inner helper's arguments (rlimits,
 * the forwarder, then the command or `--plan`).
 */
export interface SandboxCall {
  /** The jail-confined real path the command starts in (seen inside the sandbox). */
  readonly cwd: string;
  /** The command's environment, exactly. */
  readonly env: Readonly<Record<string, string>>;
  /** The inner helper's argv after its own name: `--inner`, options, then `-- COMMAND ARGS` or `--plan`. */
  readonly args: readonly string[];
  /** The call's backstop, started at the go (`--backstop-at-go`). */
  readonly backstopMs: number;
  /** Whether the command reads what follows the request on stdin, or /dev/null. */
  readonly stdin: "piped" | "null";
}

/**
 * How one call starts: the serving helper runs `argv` in `cwd` with exactly
 * `env`, as a spawn of it would. In bwrap mode that call is a sandbox made for no call
 * in particular (it may be made ahead of its call), which runs nothing until
 * `sandbox` reaches it at the go.
 */
export interface CallLaunch {
  /** The helper first (`tools.spawn`), then its arguments. */
  readonly argv: string[];
  /** The call's working folder: the command's in mode none, `/` for a sandbox (bwrap's own). */
  readonly cwd: string;
  /** The call's environment: the command's in mode none, `SANDBOX_TOOL_ENV` for a sandbox. */
  readonly env: Record<string, string>;
  /** bwrap mode: what the sandbox receives at the go; null in mode none. */
  readonly sandbox: SandboxCall | null;
}

/** The helper's arguments for the namespace and its init, up to the init's identity. */
function namespaceHead(plan: LaunchPlan): string[] {
  const head = [plan.tools.spawn, `--pidns=${plan.privilege}`];
  const runAs = effectiveRunAs(plan);
  if (runAs !== null) head.push(`--setuid=${runAs.uid}`, `--setgid=${runAs.gid}`);
  return head;
}

/** The inner helper's options: the forwarder, then the rlimits. */
function innerOptions(plan: LaunchPlan): string[] {
  // The forwarder: the inner helper listens on the sandbox's loopback and
  // relays each connection to the proxy's socket (htmcp_spawn.c says why
  // it needs no trust).
  const egress = plan.mode === "bwrap" && plan.egressSocket !== undefined
    ? [`--egress=${SANDBOX_PROXY_PORT}:${SANDBOX_EGRESS_SOCKET}`]
    : [];
  return [...egress, ...rlimitOptions(plan.limits)];
}

/**
 * The argv of a bwrap-mode sandbox: the same for every call of `plan`, so
 * one can be made before its call is known. The namespace's init opens the
 * `/etc` copies as the command's uid and executes bwrap, which sets up the
 * whole sandbox and runs the inner helper in it, which then waits for the
 * call on stdin: nothing the call chose is on this argv or has run. The
 * call's backstop starts at the go, not when the sandbox is made. Pure.
 *
 * @param plan The launch plan fixed at startup (mode bwrap).
 * @param policy The loaded policy (the jail root and bwrap's binds).
 * @returns The argv, helper first.
 */
export function sandboxArgv(plan: LaunchPlan, policy: Policy): string[] {
  const { tools } = plan;
  const egress = plan.egressSocket !== undefined
    ? ["--ro-bind", plan.egressSocket, SANDBOX_EGRESS_SOCKET]
    : [];
  return [
    ...namespaceHead(plan),
    "--backstop-at-go",
    "--init-exec",
    // In ETC_COPIES' order: the init opens them at the descriptors
    // buildBwrapArgs names in its `--file` operations.
    ...ETC_COPIES.map((file) => `--copy-in=${file}`),
    "--",
    tools.bwrap,
    // The jail root for bwrap's own working folder: the call's arrives
    // with its request, and the inner helper changes to it in the sandbox's
    // view of the files, where a symlink cannot lead out of the jail.
    ...buildBwrapArgs(
      policy,
      { cwd: policy.jailRoot, runAs: plan.runAs },
      plan.layout ?? UNKNOWN_LAYOUT,
    ),
    ...egress,
    "--ro-bind",
    tools.spawn,
    SANDBOX_HELPER_PATH,
    "--",
    SANDBOX_HELPER_PATH,
    "--inner",
    "--request",
  ];
}

function buildCall(
  plan: LaunchPlan,
  policy: Policy,
  cwd: string,
  env: Readonly<Record<string, string>>,
  payload: Payload,
): CallLaunch {
  const inner = innerOptions(plan);
  if (payload.kind === "plan") inner.push("--plan");
  if (plan.mode === "bwrap") {
    if (payload.kind === "command") inner.push("--", ...payload.argv);
    return {
      argv: sandboxArgv(plan, policy),
      cwd: "/",
      env: { ...SANDBOX_TOOL_ENV },
      sandbox: {
        cwd,
        env: chainEnvironment(plan, env),
        args: ["--inner", ...inner],
        backstopMs: Math.max(1, Math.round(plan.backstopMs)),
        // A plan always follows its request on stdin; one command reads
        // its stdin text there, or /dev/null without one.
        stdin: payload.kind === "plan" || payload.stdinText ? "piped" : "null",
      },
    };
  }
  const head = [
    ...namespaceHead(plan),
    `--backstop-ms=${Math.max(1, Math.round(plan.backstopMs))}`,
  ];
  // The go is awaited by the namespace's child, right before it executes
  // the command.
  if (payload.kind === "command") {
    if (payload.go !== undefined) inner.push(payload.go === "null" ? "--go-null" : "--go");
    inner.push("--", ...payload.argv);
  }
  return { argv: [...head, ...inner], cwd, env: chainEnvironment(plan, env), sandbox: null };
}

/**
 * How one command starts, contained (and in bwrap mode sandboxed). Pure, so
 * the exact argv and request are testable without running anything.
 *
 * @param plan The launch plan fixed at startup.
 * @param policy The loaded policy (bwrap's binds come from it).
 * @param target The command, its arguments, cwd and environment.
 * @returns The call's launch: in mode none the command is the argv's last
 *   words; in bwrap mode they are the sandbox request's.
 *
 * @example
 * ```ts
 * import type { Policy } from "../config/types.ts";
 * import { buildCallLaunch, type LaunchPlan } from "./launcher.ts";
 * declare const plan: LaunchPlan;
 * declare const policy: Policy;
 * const launch = buildCallLaunch(plan, policy, {
 *   path: "/usr/bin/ls",
 *   args: ["-la"],
 *   cwd: policy.jailRoot,
 *   env: { PATH: "/usr/bin" },
 * });
 * launch.sandbox === null; // true in mode none
 * ```
 */
export function buildCallLaunch(
  plan: LaunchPlan,
  policy: Policy,
  target: LaunchTarget,
): CallLaunch {
  return buildCall(plan, policy, target.cwd, target.env ?? {}, {
    kind: "command",
    argv: [target.path, ...target.args],
    go: target.go,
    stdinText: target.stdinText ?? target.go === "stdin",
  });
}

/**
 * The launch and stdin for running `commandPlan` in one containment: the
 * helper reads the plan (with its nonce) from stdin, so neither appears on
 * argv, where `/proc/PID/cmdline` would show it to every local user.
 *
 * @param plan The launch plan fixed at startup.
 * @param policy The loaded policy (the jail root and bwrap's binds).
 * @param commandPlan The judged plan to run.
 * @param nonce This run's hex nonce, which the helper's status record must carry.
 * @param env The plan's environment.
 * @returns The call's launch and the encoded plan for its stdin.
 * @throws {RangeError} When `commandPlan` or `nonce` is malformed (see `encodePlan`).
 */
export function buildPlanLaunch(
  plan: LaunchPlan,
  policy: Policy,
  commandPlan: CommandPlan,
  nonce: string,
  env: Readonly<Record<string, string>> = {},
): { launch: CallLaunch; stdin: Uint8Array } {
  return {
    launch: buildCall(plan, policy, commandPlan.cwd, env, { kind: "plan" }),
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
  return [tools.spawn, tools.bwrap, SANDBOX_HELPER_PATH];
}
