/**
 * Renders a systemd service unit that runs the server under the permission
 * set (as `deno run` flags, or a pinned binary that carries them) plus the OS
 * hardening that fits a command server. The unit is the fourth layer: it
 * holds even if Deno's own checks were bypassed.
 *
 * Choices the issue left open, each verified or argued in docs/permissions.md:
 * - `MemoryDenyWriteExecute=no`: V8's JIT needs pages that become executable
 *   after being written; under the kernel's equivalent (PR_SET_MDWE) Deno
 *   2.9.6 aborts at start unless run with `--v8-flags=--jitless`.
 * - `RestrictNamespaces` is dropped and `@mount` allowed when the kernel
 *   sandbox is on: bubblewrap creates user, mount, PID, net, IPC and UTS
 *   namespaces and pivots its root. Without it, only `user pid` remain:
 *   process-tree containment puts every command in a PID namespace.
 * - `PrivateTmp` / `ProtectHome=yes` would hide a granted path under /tmp or
 *   a home folder; then the unit says so and uses the weaker form instead of
 *   emitting a unit that cannot start.
 * - The unit serves HTTP, always: a stdio server under systemd has no client
 *   on its stdin and stops at once ("stdin closed").
 * - A system unit runs as a dedicated `User=`/`Group=` (default `htmcp`),
 *   never as root. The admin PIN comes from `EnvironmentFile=`, read by
 *   systemd as root before it drops privileges, so the file can be
 *   root-only (0600) and the PIN is never on the command line, in the unit,
 *   or in `systemctl show`.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { renderDenoFlags } from "./render_flags.ts";
import { isInside, parentOf } from "./_paths.ts";
import type { PermissionSet } from "./types.ts";

/** What the unit starts. */
export type UnitProgram =
  /** A `deno compile`d binary: its permission flags are baked in. */
  | { readonly kind: "binary"; readonly path: string }
  /** `deno run FLAGS MODULE`, with the generated flags on the command line. */
  | {
    readonly kind: "deno";
    readonly denoPath: string;
    readonly module: string;
    readonly denoDir: string | null;
    /**
     * The `deno.json` whose import map and lock the module needs, or null for
     * a self-contained bundle. Passed as `--config`: a service starts in `/`,
     * where Deno would find no config of its own.
     */
    readonly config?: string | null;
  };

/** What the unit runs and for whom, besides the set and the policy. */
export interface SystemdOptions {
  /** The installed binary, or Deno and the module it runs. */
  readonly program: UnitProgram;
  /** A `systemctl --user` unit (no system-wide target, no User=). */
  readonly user: boolean;
  /** The `--http` address the service listens on. */
  readonly listen: string;
  /** `User=` and `Group=` of a system unit (default `htmcp`); ignored for a user unit. */
  readonly serviceUser?: string;
  /**
   * The file holding `HTMCP_OAUTH_ADMIN_PIN=...` (`EnvironmentFile=`), or null
   * when no PIN is needed (`[auth] mode = "none"`).
   */
  readonly environmentFile: string | null;
}

/** Where the PIN file lives by default: root-only for a system unit, the user's config otherwise. */
export function defaultEnvironmentFile(user: boolean): string {
  return user ? "%h/.config/htmcp/htmcp.env" : "/etc/htmcp/htmcp.env";
}

const HOME_ROOTS = ["/home", "/root", "/run/user"];
const TMP_ROOTS = ["/tmp", "/var/tmp"];

/** systemd splits ExecStart on spaces and treats `%`, `$`, `\` and quotes specially. */
function quoteArg(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) && !arg.includes("%") && !arg.includes("$")) return arg;
  const escaped = arg.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("%", "%%")
    .replaceAll("$", "$$");
  return `"${escaped}"`;
}

/** Whether systemd reads `path` as written in a plain path setting: absolute, no blank, quote or backslash. */
export function isPlainUnitPath(path: string): boolean {
  return path.startsWith("/") && !/[\s"'\\]/.test(path);
}

/**
 * The `EnvironmentFile=` value. systemd takes it as a plain path (no quote
 * removal) with `%` specifiers expanded: the user default keeps its `%h`
 * (the home folder); any other path has its `%` escaped, and a path with a
 * blank, quote or backslash is refused rather than written so systemd would
 * read another file.
 *
 * @throws {RangeError} For a path systemd cannot take as written.
 */
function environmentFileSetting(path: string, user: boolean): string {
  if (path === defaultEnvironmentFile(user)) return path;
  if (!isPlainUnitPath(path)) {
    throw new RangeError(
      `The environment file "${path}" must be an absolute path without blanks, quotes or backslashes.`,
    );
  }
  return path.replaceAll("%", "%%");
}

/** A path for a space-separated list setting; "-" prefix would mean "ignore if missing". */
function pathList(paths: readonly string[]): string {
  return paths.map(quoteArg).join(" ");
}

/**
 * A systemd service unit for the HTTP server: the set's flags on
 * `ExecStart=` (or a pinned binary that carries them) plus the OS hardening
 * that fits a command server, a layer that holds even if Deno's own checks
 * were bypassed.
 *
 * @param set The permission set.
 * @param policy The policy it came from (paths, sandbox mode).
 * @param options What to run and for whom.
 * @returns The unit file text.
 * @throws {TypeError} When the policy has no file or the set is not for HTTP.
 * @example
 * ```ts
 * import { type PermissionSet, renderSystemdUnit } from "./mod.ts";
 * import type { Policy } from "../config/types.ts";
 * declare const set: PermissionSet;
 * declare const policy: Policy;
 * const program = { kind: "binary", path: "/usr/local/bin/htmcp" } as const;
 * const options = {
 *   program,
 *   user: false,
 *   listen: "127.0.0.1:8080",
 *   environmentFile: "/etc/htmcp/htmcp.env",
 * };
 * await Deno.writeTextFile("/etc/systemd/system/htmcp.service", renderSystemdUnit(set, policy, options));
 * ```
 */
export function renderSystemdUnit(
  set: PermissionSet,
  policy: Policy,
  options: SystemdOptions,
): string {
  const policyFile = policy.policyFile;
  if (policyFile === null) {
    throw new TypeError("A systemd unit needs a policy file: the server reads it at every start.");
  }
  if (set.transport !== "http") {
    throw new TypeError(
      "A systemd unit serves HTTP: build its permission set with a listen address.",
    );
  }
  const sandboxed = policy.sandbox.mode !== "none";
  const auditDir = parentOf(policy.auditLog);
  const readWrite = [
    policy.jailRoot,
    auditDir,
    ...(policy.stateDir === null ? [] : [policy.stateDir]),
  ];
  const program = options.program;
  const readOnly = [
    ...set.read.map((grant) => grant.value),
    ...(program.kind === "deno"
      ? [
        program.module,
        ...(program.denoDir === null ? [] : [program.denoDir]),
        ...(program.config == null ? [] : [program.config]),
      ]
      : [program.path]),
  ];
  const all = [...new Set([...readWrite, ...readOnly])];
  const underHome = all.filter((path) => HOME_ROOTS.some((root) => isInside(root, path)));
  const underTmp = all.filter((path) => TMP_ROOTS.some((root) => isInside(root, path)));

  const serveArgs = ["serve", "--policy", policyFile, "--http", options.listen];
  const config = program.kind === "deno" ? program.config ?? null : null;
  const argv = program.kind === "binary" ? [program.path, ...serveArgs] : [
    program.denoPath,
    "run",
    ...renderDenoFlags(set),
    ...(config === null ? [] : ["--config", config]),
    program.module,
    ...serveArgs,
  ];

  const lines: string[] = [];
  const add = (...more: string[]) => lines.push(...more);
  add(
    "# Generated by `htmcp systemd` from " + policyFile + ".",
    "# Regenerate it whenever the policy changes: the permission flags come from the policy.",
    "[Unit]",
    "Description=htmcp MCP terminal server (policy-confined)",
    "Documentation=https://modelcontextprotocol.io/",
    "",
    "[Service]",
    "Type=exec",
  );
  if (!options.user) {
    const account = options.serviceUser ?? "htmcp";
    add(
      "# A dedicated account, never root. Create it once, e.g.:",
      `#   useradd --system --no-create-home --shell /usr/sbin/nologin ${account}`,
      `# and give it the jail, the audit log's folder and the state dir (${account}:${account}, 0700).`,
      `User=${account}`,
      `Group=${account}`,
    );
  }
  if (options.environmentFile !== null) {
    add(
      "# The admin PIN: a file with the one line HTMCP_OAUTH_ADMIN_PIN=<pin>. systemd reads it",
      "# before dropping privileges, so keep it root-owned, mode 0600. A missing file stops the",
      "# start: approvals need the PIN. Never put the PIN on ExecStart or in Environment=.",
      `EnvironmentFile=${environmentFileSetting(options.environmentFile, options.user)}`,
    );
  }
  if (program.kind === "binary") {
    add(
      "# Pinned binary: its Deno permission flags were baked in by `deno task compile`",
      "# (a broad release binary confines itself to the same set at start).",
      "# The set, for review: " + renderDenoFlags(set).join(" "),
    );
  } else if (program.denoDir !== null) {
    add(`Environment=${quoteArg(`DENO_DIR=${program.denoDir}`)}`);
  }
  add(`ExecStart=${argv.map(quoteArg).join(" ")}`);
  add(
    "Restart=on-failure",
    "KillMode=control-group",
    "UMask=0077",
    "",
    "# OS hardening (see docs/permissions.md for `systemd-analyze security`).",
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    `ReadWritePaths=${pathList(readWrite)}`,
  );
  if (underHome.length === 0) {
    add("ProtectHome=yes");
  } else {
    // tmpfs hides every home and lets BindPaths= show just what is needed.
    const homeRw = readWrite.filter((path) => underHome.includes(path));
    const homeRo = readOnly.filter((path) => underHome.includes(path) && !homeRw.includes(path));
    add(
      `# ProtectHome=tmpfs, not yes: ${underHome.join(", ")} is under a home folder.`,
      "ProtectHome=tmpfs",
    );
    if (homeRw.length > 0) add(`BindPaths=${pathList(homeRw)}`);
    if (homeRo.length > 0) add(`BindReadOnlyPaths=${pathList(homeRo)}`);
  }
  if (underTmp.length === 0) {
    add("PrivateTmp=yes");
  } else {
    add(
      `# PrivateTmp=no: ${
        underTmp.join(", ")
      } is under a shared temp folder; move it to use PrivateTmp=yes.`,
      "PrivateTmp=no",
    );
  }
  add(
    "PrivateDevices=yes",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes",
    "ProtectClock=yes",
    "ProtectHostname=yes",
    "RestrictRealtime=yes",
    "RestrictSUIDSGID=yes",
    "LockPersonality=yes",
    "# MemoryDenyWriteExecute=no: V8's JIT writes code pages; Deno aborts under it unless run",
    "# with --v8-flags=--jitless (slower, no WebAssembly). See docs/permissions.md.",
    "MemoryDenyWriteExecute=no",
  );
  // The families bind the commands too: only HTTP, an outbound grant (the
  // PostgreSQL state store, the OTLP collector, the egress proxy), or a
  // sandbox that grants commands the network, needs IP sockets.
  const needsIp = set.transport === "http" || set.net.length > 0 ||
    (sandboxed && policy.sandbox.network !== "none");
  if (needsIp) {
    add("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6");
  } else {
    add("RestrictAddressFamilies=AF_UNIX", "PrivateNetwork=yes");
  }
  if (options.user) {
    // An unprivileged manager can apply the namespaced settings above only
    // inside a user namespace of its own.
    add("PrivateUsers=yes");
  }
  if (sandboxed) {
    add(
      "# RestrictNamespaces is not set: the bubblewrap sandbox creates user, mount, pid, net,",
      "# ipc and uts namespaces for every command, and pivots its root (@mount).",
      "SystemCallFilter=@system-service @mount",
    );
  } else {
    add(
      "# Containment needs a PID namespace (and a user namespace when not root) for every",
      "# command; no other namespace may be created.",
      "RestrictNamespaces=user pid",
      "SystemCallFilter=@system-service",
    );
  }
  add(
    // Verified: with an empty bounding set a root server cannot create the
    // PID namespace (no CAP_SYS_ADMIN) nor map uid 0 into a user namespace,
    // so containment fails and the server refuses to start. Run it as a
    // dedicated user instead (see docs/permissions.md).
    "# CapabilityBoundingSet is not emptied: process containment as root needs CAP_SYS_ADMIN",
    "# (PID namespace) and CAP_SETUID (the drop to the jail's owner). Prefer User=htmcp (a dedicated user).",
    "AmbientCapabilities=",
    "SystemCallArchitectures=native",
    "SystemCallErrorNumber=EPERM",
    "",
    "[Install]",
    options.user ? "WantedBy=default.target" : "WantedBy=multi-user.target",
    "",
  );
  return lines.join("\n");
}
