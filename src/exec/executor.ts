/**
 * `createExecutor`: probes the platform once, picks the launcher plan for
 * `[sandbox] mode`, and tracks running commands so shutdown can end them all.
 *
 * Fails closed: if process-tree containment cannot be established, or
 * `mode = "bwrap"` and the sandbox probe fails, no executor is built and the
 * server does not start.
 *
 * @module
 */
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { commandHardening } from "../policy/mod.ts";
import { detectHostLayout, jailRootRefusal } from "../sandbox/mod.ts";
import {
  chainTools,
  DEFAULT_LAUNCHER_TOOLS,
  effectiveRunAs,
  launcherPaths,
  type LauncherTools,
  type LaunchPlan,
  type NamespacePrivilege,
} from "./launcher.ts";
import { probePlan, probeServerUid } from "./probe.ts";
import { verifyHelper } from "./spawn/helper.ts";
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
  /** Override tool locations (default: this checkout's helper and `/usr/bin/bwrap`). */
  readonly tools?: Partial<LauncherTools>;
  /** Per-command hardening; default `commandHardening` from `src/policy/` (git's safe config). */
  readonly hardening?: (command: ResolvedCommand) => CommandHardening;
  /** How long the polite kill may take before the launcher is SIGKILLed (default 3000 ms). */
  readonly killGraceMs?: number;
}

/** Extra time the helper's own deadline gets beyond `limits.timeoutMs`. */
const BACKSTOP_SLACK_MS = 2_000;

/**
 * Probes containment (and the sandbox, per `policy.sandbox.mode`) and builds
 * the executor.
 *
 * @param policy The loaded policy.
 * @param options Tool paths, hardening, kill grace.
 * @returns The executor, or one sentence saying why commands cannot be run safely.
 */
export async function createExecutor(
  policy: Policy,
  options: ExecutorOptions = {},
): Promise<CreateExecutorResult> {
  const tools: LauncherTools = Object.freeze({ ...DEFAULT_LAUNCHER_TOOLS, ...options.tools });
  const probes: ProbeResult[] = [];
  // Before anything runs through it: the helper must be the binary our build
  // made from this source (helper.ts says what this defends against).
  const verified = await verifyHelper(tools.spawn);
  if (!verified.ok) {
    return { ok: false, message: `Cannot start: ${verified.detail}.` };
  }
  const uid = await probeServerUid(tools.spawn);
  if (!uid.ok) {
    return {
      ok: false,
      message: `Cannot start: process containment is unavailable because ${uid.detail}.`,
    };
  }
  probes.push({
    name: "launcher",
    ok: true,
    detail: `${tools.spawn} (SHA-256 ${verified.sha256}) runs; server uid ${uid.uid}`,
  });
  const serverIsRoot = uid.uid === 0;
  const layout = detectHostLayout();
  const basePlan = (privilege: NamespacePrivilege, mode: "none" | "bwrap"): LaunchPlan => ({
    mode,
    privilege,
    serverIsRoot,
    tools,
    backstopMs: policy.limits.timeoutMs + BACKSTOP_SLACK_MS,
    limits: policy.limits,
    layout,
  });

  const requested = policy.sandbox.mode;
  const refusal = requested === "none" ? null : jailRootRefusal(policy.jailRoot);
  const probeSandbox = (privilege: NamespacePrivilege): Promise<ProbeResult> =>
    refusal === null
      ? probePlan("sandbox (bwrap)", basePlan(privilege, "bwrap"), policy)
      : Promise.resolve({ name: "sandbox (bwrap)", ok: false, detail: refusal });

  // Containment is required in every mode. The sandbox probe for the likely
  // privilege runs alongside it: startup pays for one probe, not two.
  let privilege: NamespacePrivilege | null = null;
  let sandboxProbe: ProbeResult | null = null;
  const candidates: NamespacePrivilege[] = serverIsRoot ? ["root", "user"] : ["user"];
  for (const candidate of candidates) {
    const [contained, sandboxed] = await Promise.all([
      probePlan(`containment (${candidate})`, basePlan(candidate, "none"), policy),
      requested === "none" ? Promise.resolve(null) : probeSandbox(candidate),
    ]);
    probes.push(contained);
    if (contained.ok) {
      privilege = candidate;
      sandboxProbe = sandboxed;
      break;
    }
  }
  if (privilege === null) {
    const detail = probes[probes.length - 1]?.detail ?? "no probe ran";
    return {
      ok: false,
      message:
        `Cannot start: process-tree containment (a PID namespace via ${tools.spawn}) could not be set up: ${detail}.`,
    };
  }

  let plan = basePlan(privilege, "none");
  let summary = `Commands run with process-tree containment only ([sandbox] mode = "none").`;
  if (sandboxProbe !== null) {
    probes.push(sandboxProbe);
    if (sandboxProbe.ok) {
      plan = basePlan(privilege, "bwrap");
      summary = requested === "auto"
        ? `bwrap works, so commands run in the kernel sandbox ([sandbox] mode = "auto").`
        : `Commands run in the kernel sandbox ([sandbox] mode = "bwrap").`;
    } else if (requested === "bwrap") {
      return {
        ok: false,
        message:
          `Cannot start with [sandbox] mode = "bwrap": the bubblewrap probe failed (${sandboxProbe.detail}).`,
      };
    } else {
      summary =
        `bwrap is not usable (${sandboxProbe.detail}), so commands run with process-tree containment only ([sandbox] mode = "auto").`;
    }
  }

  const description: ExecutorDescription = Object.freeze({
    requestedMode: requested,
    mode: plan.mode,
    launcherPath: tools.spawn,
    chain: Object.freeze(chainTools(plan)),
    serverUid: uid.uid,
    commandUid: effectiveRunAs(plan)?.uid ?? uid.uid,
    summary,
    probes: Object.freeze(probes.map((p) => Object.freeze(p))),
  });
  const settings: RunSettings = Object.freeze({
    plan,
    policy,
    hardening: options.hardening ?? commandHardening,
    killGraceMs: options.killGraceMs ?? 3_000,
  });
  return { ok: true, executor: new ContainedExecutor(settings, description) };
}

class ContainedExecutor implements Executor {
  readonly #settings: RunSettings;
  readonly #description: ExecutorDescription;
  readonly #running = new Set<RunHandle>();
  readonly #inflight = new Set<Promise<ExecOutcome>>();
  #closed = false;

  constructor(settings: RunSettings, description: ExecutorDescription) {
    this.#settings = settings;
    this.#description = description;
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
  }

  describe(): ExecutorDescription {
    return this.#description;
  }

  launcherPaths(): string[] {
    return launcherPaths(this.#settings.plan.tools);
  }
}
