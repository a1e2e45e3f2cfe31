/**
 * The bubblewrap command line for one command: the kernel view a sandboxed
 * command gets. Pure: policy and request in, argv out; no I/O, so it is
 * tested by value and reviewed as data.
 *
 * What each flag answers (the threat it closes):
 * - `--unshare-user` (+ `--uid/--gid` of the run-as identity, when the
 *   server dropped to one): the command keeps an ordinary uid that maps to the
 *   same uid on the host, never 0; with `--cap-drop ALL` it holds no
 *   capability, so it cannot remount, mount, or bypass file permissions.
 * - `--unshare-pid` + `--proc /proc`: it sees only its own processes, and the
 *   whole tree dies with the namespace's init.
 * - `--unshare-net` (unless `[sandbox] network = "host"`): no sockets beyond
 *   loopback of an empty namespace, so 127.0.0.1 services of the host are out
 *   of reach. With `"allowlist"` the namespace is just as empty; the
 *   launcher binds the egress proxy's Unix socket in, the one way out.
 * - `--unshare-ipc/--unshare-uts/--unshare-cgroup`: no SysV IPC with host
 *   processes, a hostname of its own, a cgroup view rooted at itself.
 * - `--new-session`: no controlling terminal, so no TIOCSTI injection into
 *   the operator's terminal.
 * - `--die-with-parent`: the sandbox dies if the launcher dies.
 * - Read-only binds of only the system folders binaries need and a minimal
 *   `/etc` (no shadow, no sudoers, no ssh keys); no `/root`, `/home`, `/var`,
 *   `/run`, `/srv`, `/mnt`, `/media`, `/opt`. The few `/etc` files are
 *   copies (`--file`), not binds: the namespace's init opens each, as the
 *   command's own uid, right before it executes bwrap (`--copy-in`), so a
 *   copy never holds what the command could not read itself, and a copy
 *   costs no mount (each bind was one, about 0.1 ms a call).
 * - A `/dev` of five device nodes (null, zero, full, random, urandom) and
 *   the fd symlinks: no `/dev/tty` (there is no controlling terminal to
 *   reach) and no devpts, so no pseudo-terminal can be made in there.
 * - `--remount-ro /` last: the sandbox's own root and its `/etc` copies are
 *   read-only; the command writes only in the jail, `/tmp` and `/dev`'s own
 *   tmpfs (`/dev/shm` in it).
 * - The jail bound read-write at its own real path, after the `/tmp` tmpfs,
 *   so a jail under `/tmp` stays visible. Symlinks are resolved inside this
 *   view: one pointing outside the jail (even one swapped in after our path
 *   check) leads nowhere or to a read-only system file.
 *
 * The environment is not put on this argv (`--setenv`): argv is readable by
 * every local user through `/proc/PID/cmdline`. bwrap runs with only
 * `LC_ALL=C`; the command's environment reaches the helper inside the
 * sandbox with the call's request, on a pipe (`launcher.ts`).
 *
 * @module
 */
import type { SandboxNetwork } from "../config/types.ts";

/** Hostname inside the UTS namespace (hides the host's name). */
export const SANDBOX_HOSTNAME = "htmcp-sandbox";

/** System folders bound read-only when present (`-try`: merged-/usr or not). */
export const SYSTEM_DIRS: readonly string[] = Object.freeze([
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
]);

/**
 * The minimal `/etc`, as files: users and groups by name, name resolution,
 * the dynamic loader's cache, local time. Never `shadow`, `gshadow`,
 * `sudoers`, `ssh`, or anything holding a secret; `passwd` and `group` hold
 * names, not hashes. Each is copied into every sandbox as it is made, from
 * the descriptor the namespace's init opened (`FIRST_COPY_FD` onwards, in this
 * order); one missing on the host arrives empty, as if absent.
 */
export const ETC_COPIES: readonly string[] = Object.freeze([
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/hosts",
  "/etc/resolv.conf",
  "/etc/ld.so.cache",
  "/etc/localtime",
]);

/** The descriptor the first of `ETC_COPIES` is open at when bwrap starts. */
export const FIRST_COPY_FD = 3;

/**
 * The `/etc` folders, bound read-only when present: TLS roots, and Debian
 * alternatives (`/usr/bin/awk` is a symlink through `/etc/alternatives`,
 * hundreds of entries: one bind beats a symlink each).
 */
export const ETC_FOLDERS: readonly string[] = Object.freeze(["/etc/alternatives", "/etc/ssl"]);

/**
 * The device nodes bound into the sandbox's own `/dev` tmpfs: what
 * bubblewrap's `--dev` binds, less `/dev/tty` (no controlling terminal, so
 * opening it fails either way) and its devpts instance (no pseudo-terminals).
 */
export const DEV_NODES: readonly string[] = Object.freeze([
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
]);

/** The symlinks of a usual `/dev` (`/dev/stdin` and friends): free, no mount. */
const DEV_SYMLINKS: readonly (readonly [string, string])[] = [
  ["/proc/self/fd", "/dev/fd"],
  ["/proc/self/fd/0", "/dev/stdin"],
  ["/proc/self/fd/1", "/dev/stdout"],
  ["/proc/self/fd/2", "/dev/stderr"],
];

/**
 * How the host lays out its system folders: on merged-/usr systems `/bin`,
 * `/lib`... are symlinks into `/usr`, which the sandbox recreates as
 * symlinks (free) instead of bind mounts (one mount each). Gathered once at
 * startup; a folder missing from the map is bound read-only if it exists.
 */
export interface HostLayout {
  /** System folder -> its symlink target inside `/usr` (`"/bin"` -> `"usr/bin"`). */
  readonly usrSymlinks: ReadonlyMap<string, string>;
}

/** A layout that assumes nothing: every system folder is bound if present. */
export const UNKNOWN_LAYOUT: HostLayout = Object.freeze({ usrSymlinks: new Map() });

/** A uid and gid on the host (never 0: see `chooseRunAs`). */
export interface RunAsIdentity {
  /** The uid commands run as, mapped to itself inside the sandbox. */
  readonly uid: number;
  /** The primary gid commands run as, mapped to itself inside the sandbox. */
  readonly gid: number;
}

/**
 * What of a policy decides the sandbox's options (a loaded `Policy` is one):
 * the sandbox needs no more, so it cannot come to depend on more.
 */
export interface BwrapPolicy {
  /** `realpath` of the jail root: the one host folder bound read-write. */
  readonly jailRoot: string;
  /** `[sandbox] network`: anything but `"host"` gets its own empty network namespace. */
  readonly sandbox: { readonly network: SandboxNetwork };
}

/** What differs per call (and the identity, fixed at startup). */
export interface SandboxRequest {
  /** The jail-confined real cwd. */
  readonly cwd: string;
  /**
   * The identity the launcher already dropped to before bwrap, mapped to
   * itself inside the sandbox; null or absent keeps the caller's own uid
   * (bwrap's default), which is what a non-root server runs commands as.
   */
  readonly runAs?: RunAsIdentity | null;
}

/**
 * The bubblewrap options (without the `bwrap` path and without the final
 * `--`) for running one command of `policy` in `request.cwd`.
 *
 * @param policy The loaded policy (jail root, `[sandbox] network`).
 * @param request The per-call part.
 * @param layout Which system folders are symlinks into `/usr` on this host.
 * @returns bwrap options, in the order bwrap must apply them.
 * @throws {RangeError} When the jail root is `/` or a system folder the
 *   sandbox binds read-only: binding it read-write would undo the sandbox.
 *   The executor checks this at startup, so it is a bug if reached later.
 *
 * @example
 * ```ts
 * import { buildBwrapArgs } from "./bwrap_args.ts";
 * const policy = { jailRoot: "/srv/jail", sandbox: { network: "none" } } as const;
 * const args = buildBwrapArgs(policy, { cwd: "/srv/jail/src" });
 * args.includes("--unshare-net"); // true: no network unless the policy says "host"
 * ```
 */
export function buildBwrapArgs(
  policy: BwrapPolicy,
  request: SandboxRequest,
  layout: HostLayout = UNKNOWN_LAYOUT,
): string[] {
  const jail = policy.jailRoot;
  const refusal = jailRootRefusal(jail);
  if (refusal !== null) throw new RangeError(refusal);
  const args: string[] = [
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
  ];
  const runAs = request.runAs ?? null;
  if (runAs !== null) {
    if (runAs.uid === 0 || runAs.gid === 0) {
      throw new RangeError("Commands never run as uid or gid 0 inside the sandbox.");
    }
    args.push("--uid", String(runAs.uid), "--gid", String(runAs.gid));
  }
  args.push(
    "--unshare-pid",
    // No reaper of bwrap's own at pid 1: the inner helper is that init (it
    // forks the command and reaps until it ends, as the outer namespace's
    // init does), one process level fewer on every call's way in and out.
    "--as-pid-1",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup",
    "--hostname",
    SANDBOX_HOSTNAME,
  );
  if (policy.sandbox.network !== "host") args.push("--unshare-net");
  args.push("--ro-bind", "/usr", "/usr");
  for (const dir of SYSTEM_DIRS) {
    const target = layout.usrSymlinks.get(dir);
    if (target !== undefined && isUsrTarget(target)) args.push("--symlink", target, dir);
    else args.push("--ro-bind-try", dir, dir);
  }
  ETC_COPIES.forEach((file, i) =>
    args.push("--perms", "0444", "--file", String(FIRST_COPY_FD + i), file)
  );
  for (const folder of ETC_FOLDERS) args.push("--ro-bind-try", folder, folder);
  args.push("--proc", "/proc", "--tmpfs", "/dev");
  for (const node of DEV_NODES) args.push("--dev-bind", node, node);
  for (const [target, link] of DEV_SYMLINKS) args.push("--symlink", target, link);
  args.push(
    "--dir",
    "/dev/shm",
    "--tmpfs",
    "/tmp",
    "--bind",
    jail,
    jail,
    // After every operation that creates something in the root: from here
    // on, only the jail, /tmp and /dev (each a mount of its own) are writable.
    "--remount-ro",
    "/",
    "--chdir",
    request.cwd,
    "--cap-drop",
    "ALL",
  );
  return args;
}

const SYSTEM_TREES: readonly string[] = ["/usr", "/etc", "/proc", "/dev", "/tmp", ...SYSTEM_DIRS];

/**
 * Why `jailRoot` cannot be a sandbox jail, or null when it can. Pure.
 *
 * A jail equal to `/`, or equal to or above a folder the sandbox mounts
 * (`/usr`, `/etc`, `/proc`, `/dev`, `/tmp`, `/lib`...), would be bound
 * read-write over it or hide it.
 *
 * @example
 * ```ts
 * import { jailRootRefusal } from "./bwrap_args.ts";
 * jailRootRefusal("/srv/jail"); // null
 * jailRootRefusal("/usr"); // 'The jail root "/usr" cannot be sandboxed: ...'
 * ```
 */
export function jailRootRefusal(jailRoot: string): string | null {
  if (!jailRoot.startsWith("/")) {
    return `The jail root "${jailRoot}" is not an absolute path.`;
  }
  for (const tree of SYSTEM_TREES) {
    if (jailRoot === "/" || jailRoot === tree || tree.startsWith(`${jailRoot}/`)) {
      return `The jail root "${jailRoot}" cannot be sandboxed: it is or contains the system folder "${tree}".`;
    }
  }
  return null;
}

/**
 * True for a symlink target that stays inside the read-only `/usr`
 * (`usr/lib64`, `/usr/bin`): only those are recreated as symlinks, so a
 * strange host layout can never point the sandbox at a folder we do not bind.
 */
export function isUsrTarget(target: string): boolean {
  const path = target.startsWith("/") ? target.slice(1) : target;
  return /^usr\/[A-Za-z0-9_.+-]+(?:\/[A-Za-z0-9_.+-]+)*$/.test(path) &&
    !path.split("/").includes("..");
}
