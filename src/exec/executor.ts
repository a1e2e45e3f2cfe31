/**
 * `createExecutor`: probes the platform once, picks the identity commands run
 * as and the launcher plan for `[sandbox] mode`, and tracks running commands
 * so shutdown can end them all.
 *
 * Fails closed, with one sentence that names the fix: no executor is built
 * (so the server does not start) when process-tree containment cannot be
 * established, when the kernel sandbox cannot be set up (`"bwrap"`, and
 * `"auto"`, which means the same and never falls back), when `"none"` lacks
 * its opt-in, when no identity other than root could run commands, or when
 * that identity cannot search and write the jail.
 *
 * @module
 */
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { fullControlRefusal, sandboxOptOutRefusal } from "../config/mod.ts";
import {
  chooseRunAs,
  jailRootRefusal,
  PATH_CHECK_ONLY_WARNING,
  type RunAsIdentity,
  type UserEntry,
} from "../sandbox/mod.ts";
import {
  chainTools,
  DEFAULT_LAUNCHER_TOOLS,
  launcherPaths,
  type LauncherTools,
  type LaunchPlan,
  type NamespacePrivilege,
} from "./launcher.ts";
import { lookupUser, probePlan, probeServerUid } from "./probe.ts";
import { verifyHelper } from "./spawn/helper.ts";
import { ServingHelper } from "./serving_helper.ts";
import { helperFolderLister } from "./list_beneath.ts";
import type { FolderLister } from "../jail/mod.ts";
import { jailIdentity, SandboxAhead } from "./sandbox_ahead.ts";
import {
  emptyOutcome,
  type PlanOutcome,
  type PlanRequest,
  runContained,
  type RunHandle,
  runPlanContained,
  type RunSettings,
} from "./run.ts";
import type {
  CommandHardening,
  CreateExecutorResult,
  ExecOutcome,
  ExecRequest,
  Executor,
  ExecutorDescription,
  ProbeResult,
} from "./types.ts";

/** Optional knobs, mostly for tests and `htmcp check`. */
export interface ExecutorOptions {
  /** Override tool locations (default: `DEFAULT_LAUNCHER_TOOLS`). */
  readonly tools?: Partial<LauncherTools>;
  /** Extra per-command argv/env for tests; production passes the policy's run specification instead. */
  readonly hardening?: (command: ResolvedCommand) => CommandHardening;
  /** How long the polite kill may take before the launcher is SIGKILLed (default 3000 ms). */
  readonly killGraceMs?: number;
  /** The egress proxy's socket (`[sandbox] network = "allowlist"`), bound into every sandbox. */
  readonly egressSocket?: string;
}

/** Extra time `timeout`'s own deadline gets beyond `limits.timeoutMs`. */
const BACKSTOP_SLACK_MS = 2_000;

const refuse = (message: string): CreateExecutorResult => ({ ok: false, message });

/**
 * Probes containment and the sandbox, chooses who commands run as, and
 * builds the executor.
 *
 * @param policy The loaded policy.
 * Denies on failure: when the helper is not the build's, containment or the
 * sandbox cannot be set up, or the policy asks for what cannot be enforced
 * here (no sandbox without `accept_path_check_only`, full control or an
 * egress allowlist without what they need), no executor is built.
 *
 * @param policy The loaded policy.
 * @param options Tool paths, hardening, kill grace, the egress proxy's socket.
 * @returns The executor, or one sentence saying why commands cannot be run safely and the fix.
 *
 * @example
 * ```ts
 * import type { Policy } from "../config/types.ts";
 * import { createExecutor } from "./executor.ts";
 * declare const policy: Policy;
 * const built = await createExecutor(policy);
 * if (!built.ok) {
 *   console.error(built.message);
 *   Deno.exit(2);
 * }
 * console.log(built.executor.describe().summary); // which mode runs commands, and why
 * ```
 */
export async function createExecutor(
  policy: Policy,
  options: ExecutorOptions = {},
): Promise<CreateExecutorResult> {
  const tools: LauncherTools = Object.freeze({ ...DEFAULT_LAUNCHER_TOOLS, ...options.tools });
  const requested = policy.sandbox.mode;
  // The loader refuses this already; a policy built any other way is refused
  // here too, so no caller gets an unsandboxed executor without the opt-in.
  const optOut = sandboxOptOutRefusal(policy.sandbox);
  if (optOut !== null) return refuse(`Cannot start: ${optOut}`);
  // A shell string is a shell on the host without the sandbox: full-control
  // mode runs only with it, whatever built the policy.
  if (policy.fullControl !== undefined) {
    const refusal = fullControlRefusal(policy.sandbox);
    if (refusal !== null) return refuse(`Cannot start: ${refusal}`);
  }
  // An allowlist without the sandbox's network namespace would be a list nobody enforces.
  if (policy.sandbox.network === "allowlist" && requested !== "none" && !options.egressSocket) {
    return refuse(
      'Cannot start: [sandbox] network = "allowlist" needs the egress proxy, and none was started.',
    );
  }
  const mode: "none" | "bwrap" = requested === "none" ? "none" : "bwrap";
  const modeLabel = requested === "auto"
    ? `[sandbox] mode = "auto" (which means "bwrap")`
    : `[sandbox] mode = "${requested}"`;
  if (mode === "bwrap") {
    const refusal = jailRootRefusal(policy.jailRoot);
    if (refusal !== null) return refuse(`Cannot start with ${modeLabel}: ${refusal}`);
  }

  const probes: ProbeResult[] = [];
  // Before anything runs through it: the helper must be the binary our build
  // made from this source (helper.ts says what this defends against).
  const verified = await verifyHelper(tools.spawn);
  if (!verified.ok) return refuse(`Cannot start: ${verified.detail}.`);
  // Started here, right after the helper's bytes were verified, and kept:
  // the process the probes prove is the one every call is a fork of (a new
  // one is spawned only should it die). The startup probes are its first
  // calls, forks instead of spawns of their own.
  const helper = new ServingHelper(tools.spawn);
  const server = await probeServerUid(helper);
  if (!server.ok) {
    await helper.close();
    return refuse(`Cannot start: process containment is unavailable because ${server.detail}.`);
  }
  probes.push({
    name: "launcher",
    ok: true,
    detail: `${tools.spawn} (SHA-256 ${verified.sha256}) runs; server uid ${server.uid}`,
  });
  const serverIsRoot = server.uid === 0;

  const identity = await chooseIdentity(policy, helper, server.uid);
  if (!identity.ok) {
    await helper.close();
    return refuse(identity.message);
  }
  const runAs = identity.runAs;
  const commandUid = runAs?.uid ?? server.uid;
  const commandGid = runAs?.gid ?? server.gid;

  // A root server creates the PID namespace with its own CAP_SYS_ADMIN and
  // then drops to `runAs`. It never uses a user namespace of its own: inside
  // one that maps only uid 0, the drop is impossible, and every process would
  // still be root on the host for file permissions.
  const privilege: NamespacePrivilege = serverIsRoot ? "root" : "user";
  const plan: LaunchPlan = Object.freeze({
    mode,
    privilege,
    serverIsRoot,
    runAs,
    tools,
    backstopMs: policy.limits.timeoutMs + BACKSTOP_SLACK_MS,
    limits: policy.limits,
    // As the helper read it: the server's own permissions cannot.
    layout: server.layout,
    ...(policy.sandbox.network === "allowlist" && options.egressSocket !== undefined
      ? { egressSocket: options.egressSocket }
      : {}),
  });
  const probeName = mode === "bwrap" ? "sandbox (bwrap)" : `containment (${privilege})`;
  const ahead = new SandboxAhead(helper, () => jailIdentity(policy.jailRoot));
  const probe = await probePlan(probeName, plan, policy, helper, ahead);
  probes.push(probe);
  if (!probe.ok) {
    await helper.close();
    return refuse(probeRefusal(probe, { modeLabel, mode, serverIsRoot, commandUid, policy }));
  }

  const who = `uid ${commandUid} (${identity.source})`;
  const network = policy.sandbox.network === "allowlist"
    ? ` Network: only the listed hosts, through the egress proxy.`
    : policy.sandbox.network === "host"
    ? " Network: the host's."
    : "";
  const summary = mode === "bwrap"
    ? `Commands run in the kernel sandbox (${modeLabel}) as ${who}.${network}`
    : `${PATH_CHECK_ONLY_WARNING} Commands run as ${who}.`;
  const description: ExecutorDescription = Object.freeze({
    requestedMode: requested,
    mode,
    launcherPath: tools.spawn,
    chain: Object.freeze(chainTools(plan)),
    serverUid: server.uid,
    commandUid,
    commandGid,
    commandUidSource: identity.source,
    summary,
    probes: Object.freeze(probes.map((p) => Object.freeze(p))),
  });
  const settings: RunSettings = Object.freeze({
    plan,
    policy,
    // The policy's run specification already carries git's safety options
    // and environment (what runs is what was audited); no second layer adds any.
    hardening: options.hardening ?? null,
    killGraceMs: options.killGraceMs ?? 3_000,
    // Every call is a fork of the one serving helper the probe ran through;
    // `shutdown` lets it go (and the sandbox made ahead with it).
    helper,
    ahead,
  });
  return { ok: true, executor: new ContainedExecutor(settings, description) };
}

type Identity =
  | { ok: true; runAs: RunAsIdentity | null; source: string }
  | { ok: false; message: string };

/** Gathers the facts for `chooseRunAs`: the jail's owner and `[sandbox] user`. */
async function chooseIdentity(
  policy: Policy,
  helper: ServingHelper,
  serverUid: number,
): Promise<Identity> {
  let owner: UserEntry;
  try {
    const info = await Deno.stat(policy.jailRoot);
    if (info.uid === null || info.gid === null) throw new TypeError("no owner");
    owner = { uid: info.uid, gid: null };
  } catch (error) {
    const why = error instanceof Deno.errors.NotCapable
      ? "Deno's permissions do not allow reading it"
      : "it cannot be read";
    return {
      ok: false,
      message:
        `Cannot start: the owner of the jail root "${policy.jailRoot}" decides who commands run as, and ${why}.`,
    };
  }
  const configuredKey = policy.sandbox.user;
  let configured: UserEntry | null = null;
  if (configuredKey !== null) {
    const found = await lookupUser(helper, configuredKey);
    if (!found.ok) return { ok: false, message: `Cannot start: ${found.detail}.` };
    if (found.entry === null) {
      return {
        ok: false,
        message:
          `Cannot start: [sandbox] user = "${configuredKey}" names no user on this system; create it or give its uid.`,
      };
    }
    configured = found.entry;
  } else if (serverUid === 0 && owner.uid !== 0) {
    // The owner's primary group, when the passwd database knows the owner.
    const found = await lookupUser(helper, owner.uid);
    if (!found.ok) return { ok: false, message: `Cannot start: ${found.detail}.` };
    owner = found.entry ?? owner;
  }
  return chooseRunAs({
    serverUid,
    jailRoot: policy.jailRoot,
    jailOwner: owner,
    configuredLabel: configuredKey === null ? null : JSON.stringify(configuredKey),
    configured,
  });
}

/** The startup refusal for a failed probe: what failed, and the fix. */
function probeRefusal(
  probe: ProbeResult,
  facts: {
    modeLabel: string;
    mode: "none" | "bwrap";
    serverIsRoot: boolean;
    commandUid: number;
    policy: Policy;
  },
): string {
  const { modeLabel, commandUid } = facts;
  const jail = facts.policy.jailRoot;
  if (probe.jailAccess === true) {
    return `Cannot start with ${modeLabel}: commands run as uid ${commandUid}, which cannot search and write the jail root "${jail}" (${probe.detail}); make the jail owned by that uid (for example "chown -R ${commandUid}: ${jail}") and every folder above it searchable (chmod o+x), or set [sandbox] user to the jail's owner.`;
  }
  const namespaceRefused =
    /user namespace|No permissions to creat|unshare failed|Operation not permitted|No space left/i
      .test(probe.detail);
  if (facts.serverIsRoot && /unshare\(CLONE_NEWPID\)/.test(probe.detail)) {
    return `Cannot start: the server runs as root but cannot create a PID namespace (${probe.detail}); give it CAP_SYS_ADMIN (a container needs --cap-add SYS_ADMIN or its equivalent) or run it as a non-root user, which uses unprivileged user namespaces instead.`;
  }
  if (namespaceRefused) {
    return `Cannot start with ${modeLabel}: this system does not let uid ${commandUid} create user namespaces, which ${
      facts.mode === "bwrap" ? "the kernel sandbox needs" : "process containment needs without root"
    } (${probe.detail}); enable unprivileged user namespaces (sysctl user.max_user_namespaces=15000, kernel.unprivileged_userns_clone=1 where it exists, or an AppArmor profile for bwrap where kernel.apparmor_restrict_unprivileged_userns=1).`;
  }
  if (facts.mode === "none") {
    return `Cannot start: process-tree containment (a PID namespace via ${DEFAULT_LAUNCHER_TOOLS.spawn}) could not be set up: ${probe.detail}.`;
  }
  if (/No such file|not found|missing/i.test(probe.detail)) {
    return `Cannot start with ${modeLabel}: the bubblewrap probe failed (${probe.detail}); install bubblewrap (apt-get install bubblewrap).`;
  }
  return `Cannot start with ${modeLabel}: the bubblewrap probe failed (${probe.detail}); fix the cause, or set mode = "none" with accept_path_check_only = true knowing the jail is then advisory.`;
}

class ContainedExecutor implements Executor {
  readonly listFolder: FolderLister;
  readonly #settings: RunSettings;
  readonly #description: ExecutorDescription;
  readonly #running = new Set<RunHandle>();
  readonly #inflight = new Set<Promise<ExecOutcome>>();
  #closed = false;

  constructor(settings: RunSettings, description: ExecutorDescription) {
    this.#settings = settings;
    this.#description = description;
    this.listFolder = helperFolderLister(settings.helper);
  }

  run(request: ExecRequest): Promise<ExecOutcome> {
    const refused = this.#refusal(request.command.name, [request.command]);
    if (refused !== null) return Promise.resolve(refused);
    return this.#track(runContained(this.#settings, request, this.#register));
  }

  runPlan(request: PlanRequest): Promise<PlanOutcome> {
    const commands = request.plan.steps.flatMap(({ step }) =>
      step.kind === "pipeline" ? step.stages.map((s) => ({ name: request.name, path: s.path })) : []
    );
    const refused = this.#refusal(request.name, commands);
    if (refused !== null) return Promise.resolve({ ...refused, stages: [] });
    return this.#track(runPlanContained(this.#settings, request, this.#register));
  }

  /** Why a run must not start (shutting down, or Deno's run gate), or null. */
  #refusal(name: string, commands: readonly { name: string; path: string }[]): ExecOutcome | null {
    if (this.#closed) {
      return emptyOutcome(
        "CANCELLED",
        `The server is shutting down; "${name}" was not started.`,
        0,
      );
    }
    // The run gate. Deno spawns only the launcher, which then starts the
    // command, so Deno's own --allow-run check never sees the command's
    // path. Asking Deno here keeps the second layer meaningful: the
    // generated grant lists exactly the allowlisted paths, so a binary our
    // policy engine let through by mistake is refused here (RUNTIME_DENIED)
    // even though the spawn itself would succeed. Every stage of a plan is
    // asked. The startup probes do not come through here, so they are not gated.
    for (const command of commands) {
      if (Deno.permissions.querySync({ name: "run", command: command.path }).state !== "granted") {
        return emptyOutcome(
          "RUNTIME_DENIED",
          `Deno's permissions refused running "${command.name}" (${command.path}), which the policy engine had allowed.`,
          0,
        );
      }
    }
    return null;
  }

  readonly #register = (handle: RunHandle) => {
    // A run that spawned after shutdown began is stopped at once.
    if (this.#closed) handle.stop("shutdown");
    this.#running.add(handle);
    return () => this.#running.delete(handle);
  };

  #track<T extends ExecOutcome>(call: Promise<T>): Promise<T> {
    this.#inflight.add(call);
    const forget = () => this.#inflight.delete(call);
    call.then(forget, forget);
    return call;
  }

  async shutdown(): Promise<void> {
    this.#closed = true;
    for (const handle of this.#running) handle.stop("shutdown");
    await Promise.allSettled([...this.#inflight]);
    await this.#settings.helper.close();
  }

  describe(): ExecutorDescription {
    return this.#description;
  }

  launcherPaths(): string[] {
    return launcherPaths(this.#settings.plan.tools);
  }

  helperPid(): number | null {
    return this.#settings.helper.pid;
  }
}
