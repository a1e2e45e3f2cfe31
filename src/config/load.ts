/**
 * The policy loader: TOML file + `HTMCP_*` environment -> one validated,
 * resolved, deeply frozen `Policy`.
 *
 * Everything that can be wrong with a policy is found here, at startup, and
 * reported as one sentence naming the key; the loader never throws for a bad
 * policy. A server that starts has a policy in which every path is absolute
 * and real, every command resolved, every regex compiled.
 *
 * @module
 */
import { basename, dirname, resolve } from "../path/mod.ts";
import { interpreterWarnings, isInterpreter } from "../policy/interpreters.ts";
import type { AuditFailMode, Policy } from "./types.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";
import { type PolicyFile, PolicyFileSchema } from "./schema.ts";
import { formatIssues } from "./issues.ts";
import { readPolicyFile } from "./policy_file.ts";
import { buildChildEnv, DEFAULT_ENV_PASS, readEnv } from "./child_env.ts";
import { isInside, realPathForCheck } from "./paths.ts";
import {
  mayBeInside,
  type PathSetting,
  resolveAuditLog,
  resolveJailRoot,
  resolveStateDir,
} from "./locations.ts";
import { buildCommandLists } from "./lists.ts";
import { buildArgSchemas } from "./arg_schemas.ts";
import { checkDisabledGuards } from "./guard_names.ts";
import { compileExtraPattern } from "./patterns.ts";
import { buildRemoteSettings } from "./remote.ts";
import { buildSandboxSettings } from "./sandbox.ts";
import { buildLinkSettings } from "./links.ts";
import { buildApprovalSettings } from "./approval.ts";
import { buildAuditSettings } from "./audit_settings.ts";
import { buildLogSettings, buildTelemetrySettings } from "./observability.ts";
import { buildStateSettings } from "./state.ts";
import { buildFullControl, withFullControlLimits } from "./full_control.ts";
import { deepFreeze, FrozenMap, FrozenSet } from "./freeze.ts";

/** Settings the CLI supplies on top of the file and the environment. */
export interface LoadOverrides {
  /** `--http HOST:PORT`: replaces `[http] listen`. */
  readonly httpListen?: string;
}

/** What `loadPolicy` reads. */
export interface LoadOptions {
  /** `--policy FILE`; when null, `HTMCP_POLICY_FILE` is used, and with neither the policy comes from the environment alone. */
  readonly policyFile: string | null;
  /** The server's environment (`Deno.env.toObject()`), read once here. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What the CLI's flags set; each replaces the policy-file key it names. */
  readonly overrides?: LoadOverrides;
}

/** The loaded policy, or the one-sentence startup error. */
export type LoadResult = { ok: true; policy: Policy } | { ok: false; message: string };

/** The default audit log, beside the policy file. */
export const DEFAULT_AUDIT_LOG_NAME = "htmcp-audit.jsonl";

/** Limits defaults. The rlimits default to null: not set by us. */
export const LIMIT_DEFAULTS = {
  timeoutMs: 30_000,
  maxOutputBytes: 1024 * 1024,
  maxConcurrent: 4,
  queueMax: 64,
  queueWaitMs: 10_000,
  progressIntervalMs: 5_000,
  // Below the ~60 s after which Claude Desktop and claude.ai give up on a call.
  foregroundMs: 45_000,
  // Ten minutes, or timeout_ms when that is longer.
  maxTimeoutMs: 600_000,
  jobOutputBytes: 1024 * 1024,
  jobRetentionS: 3_600,
  inlineOutputBytes: 32 * 1024,
} as const;

/**
 * Loads, validates and freezes the policy.
 *
 * @param options the policy file (or null), the environment, CLI overrides
 * @returns `{ ok: true, policy }`, or `{ ok: false, message }` with one sentence naming the key
 * @example
 * ```ts
 * const loaded = await loadPolicy({ policyFile: "policy.toml", env: Deno.env.toObject() });
 * if (!loaded.ok) {
 *   console.error(loaded.message);
 *   Deno.exit(2);
 * }
 * ```
 */
export async function loadPolicy(options: LoadOptions): Promise<LoadResult> {
  try {
    const loaded = await load(options);
    return loaded.ok ? { ok: true, policy: loaded.value } : { ok: false, message: loaded.message };
  } catch (error) {
    // A bug, not a bad policy; still a refusal to start, never a half-loaded server.
    const why = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `Loading the policy failed unexpectedly: ${why}.` };
  }
}

/** An `HTMCP_*` variable; the empty string counts as unset. */
function envSetting(env: LoadOptions["env"], name: string): string | undefined {
  const value = readEnv(env, name);
  return value === undefined || value === "" ? undefined : value;
}

function choosePath(
  key: string,
  envName: string,
  envValue: string | undefined,
  fileValue: string | undefined,
  cwd: string,
  baseDir: string,
): PathSetting | null {
  if (envValue !== undefined) {
    return { value: envValue, label: `Policy key "${key}" (from ${envName})`, baseDir: cwd };
  }
  if (fileValue !== undefined) return { value: fileValue, label: `Policy key "${key}"`, baseDir };
  return null;
}

async function load(options: LoadOptions): Promise<Checked<Policy>> {
  const env = options.env;
  const cwd = Deno.cwd();
  const warnings: string[] = [];

  // --- the file ---------------------------------------------------------
  const fromEnv = envSetting(env, "HTMCP_POLICY_FILE");
  const given = options.policyFile ?? fromEnv ?? null;
  const policyFile = given === null ? null : resolve(cwd, given);
  let file: PolicyFile = {};
  if (policyFile !== null) {
    const label = options.policyFile !== null ? "--policy" : "HTMCP_POLICY_FILE";
    const raw = await readPolicyFile(policyFile, label);
    if (!raw.ok) return raw;
    // A policy is parsed once per start: compiling zod's fast path for its
    // tables costs more than the one parse it would speed up.
    const parsed = PolicyFileSchema.safeParse(raw.value, { jitless: true });
    if (!parsed.success) return fail(formatIssues(parsed.error.issues, raw.value));
    file = parsed.data;
  }
  const baseDir = policyFile === null ? cwd : dirname(policyFile);

  // --- the jail ---------------------------------------------------------
  const jailSetting = choosePath(
    "jail_root",
    "HTMCP_JAIL_ROOT",
    envSetting(env, "HTMCP_JAIL_ROOT"),
    file.jail_root,
    cwd,
    baseDir,
  );
  if (jailSetting === null) {
    return fail(
      'Policy key "jail_root" is not set; set it in the policy file or in the environment variable HTMCP_JAIL_ROOT.',
    );
  }
  const jail = await resolveJailRoot(jailSetting);
  if (!jail.ok) return jail;
  const jailRoot = jail.value;

  if (policyFile !== null) {
    // Self-modification: a model that can write the policy widens its own
    // allowlist at the next start.
    const realPolicy = await realPathForCheck(policyFile, "The policy file");
    if (!realPolicy.ok) return realPolicy;
    if (isInside(jailRoot, realPolicy.value)) {
      return fail(
        `${jailSetting.label} is ${
          quote(jailRoot)
        }, which contains the policy file itself, so the model could rewrite its own policy.`,
      );
    }
  }

  // --- the child environment ----------------------------------------------
  const children = buildChildEnv(file.env?.pass ?? DEFAULT_ENV_PASS, env);
  if (!children.ok) return children;
  for (const dir of children.value.pathDirs) {
    if (await mayBeInside(jailRoot, dir)) {
      return fail(
        `Policy key "env.pass" gives children the PATH folder ${
          quote(dir)
        }, which is inside the jail root, where the model could plant programs.`,
      );
    }
  }

  // --- files outside the jail ---------------------------------------------
  const auditSetting = choosePath(
    "audit_log",
    "HTMCP_AUDIT_LOG",
    envSetting(env, "HTMCP_AUDIT_LOG"),
    file.audit_log,
    cwd,
    baseDir,
  ) ?? { value: DEFAULT_AUDIT_LOG_NAME, label: 'Policy key "audit_log" (default)', baseDir };
  const auditFailMode = chooseFailMode(envSetting(env, "HTMCP_AUDIT_FAIL_MODE"), file);
  if (!auditFailMode.ok) return auditFailMode;
  const auditLog = await resolveAuditLog(auditSetting, jailRoot, auditFailMode.value, warnings);
  if (!auditLog.ok) return auditLog;

  const stateSetting = choosePath(
    "state_dir",
    "HTMCP_STATE_DIR",
    envSetting(env, "HTMCP_STATE_DIR"),
    file.state_dir,
    cwd,
    baseDir,
  );
  const stateDir = stateSetting === null
    ? pass(null)
    : await resolveStateDir(stateSetting, jailRoot);
  if (!stateDir.ok) return stateDir;
  const state = await buildStateSettings(file.state, env, baseDir);
  if (!state.ok) return state;

  // --- commands -----------------------------------------------------------
  const lists = await buildCommandLists(file, children.value.pathDirs, jailRoot);
  if (!lists.ok) return lists;
  warnings.push(...lists.value.warnings);
  const argSchemas = buildArgSchemas(file, lists.value.allowlist);
  if (!argSchemas.ok) return argSchemas;

  // --- redaction ------------------------------------------------------------
  const redaction = file.redaction ?? {};
  const extraPatterns = [];
  for (const [index, entry] of (redaction.extra_patterns ?? []).entries()) {
    const compiled = compileExtraPattern(entry.name, entry.regex, index + 1);
    if (!compiled.ok) return compiled;
    extraPatterns.push(compiled.value);
  }

  // --- remote access --------------------------------------------------------
  const remote = await buildRemoteSettings(file, {
    envBaseUrl: envSetting(env, "HTMCP_BASE_URL"),
    envTokenTtl: envSetting(env, "HTMCP_OAUTH_ACCESS_TOKEN_TTL_S"),
    listenOverride: options.overrides?.httpListen,
    baseDir,
    jailRoot,
  });
  if (!remote.ok) return remote;
  warnings.push(...remote.value.warnings);

  // --- file download links -------------------------------------------------
  const links = buildLinkSettings(file);
  if (!links.ok) return links;

  // --- approvals -------------------------------------------------------------
  const approval = await buildApprovalSettings(
    file,
    baseDir,
    [jailRoot, ...(stateDir.value === null ? [] : [stateDir.value])],
  );
  if (!approval.ok) return approval;
  const prompts = lists.value.rules.some((rule) => rule.decision === "prompt");
  if (prompts && stateDir.value === null && file.state?.backend !== "postgres") {
    // An approval the operator answers from another process lives in the
    // state store; without one a prompt rule could never be answered out of band.
    return fail(
      'Policy has [[rules]] or allowlist entries with decision = "prompt", which need a state_dir (or the postgres state backend) to hold approvals.',
    );
  }

  // --- the kernel sandbox --------------------------------------------------
  const sandbox = buildSandboxSettings(file, warnings);
  if (!sandbox.ok) return sandbox;
  // Without the kernel sandbox, commands read their own configuration from
  // HOME (curl's .curlrc, wget's .wgetrc, npm's .npmrc, pip's, ...): a HOME in
  // the jail is configuration the model writes, which can name host files or
  // programs (the red team read a host file through a .curlrc). Under bwrap
  // it reaches only the jail. git never reads HOME (git_safety.ts).
  const home = children.value.childEnv["HOME"];
  if (
    sandbox.value.mode !== "bwrap" && home !== undefined && home !== "" &&
    await mayBeInside(jailRoot, home)
  ) {
    return fail(
      `Policy key "env.pass" gives children HOME ${
        quote(home)
      }, which is inside the jail root: without the kernel sandbox commands would read configuration the model writes there; pass another HOME, or leave HOME out of env.pass.`,
    );
  }
  const telemetry = buildTelemetrySettings(file);
  if (!telemetry.ok) return telemetry;
  const log = buildLogSettings(file);
  const fullControl = await buildFullControl(
    file,
    sandbox.value,
    children.value.pathDirs,
    warnings,
  );
  if (!fullControl.ok) return fullControl;

  // --- the rest, with defaults ----------------------------------------------
  const guards = checkDisabledGuards(file.guards?.disable ?? []);
  if (!guards.ok) return guards;
  const disabledGuards = new FrozenSet(guards.value);
  const confineArgs = file.paths?.confine_args ?? true;
  const redactionEnabled = redaction.enabled ?? true;
  if (!confineArgs) {
    warnings.push(
      'Policy key "paths.confine_args" is false: arguments naming paths outside the jail are not refused.',
    );
  }
  if (!redactionEnabled) {
    warnings.push(
      'Policy key "redaction.enabled" is false: secrets in command output reach the model.',
    );
  }
  // A harmless-looking name that resolves to an interpreter (`run` -> bash)
  // warns under the interpreter's real name.
  const runnable = [...lists.value.allowlist.values()].flatMap((command) =>
    isInterpreter(command.name) ? [command.name] : [command.name, basename(command.realPath)]
  );
  warnings.push(...interpreterWarnings(runnable, disabledGuards));

  const auditSettings = buildAuditSettings(file, auditLog.value, stateDir.value);
  if (!auditSettings.ok) return auditSettings;

  const limits = file.limits ?? {};
  const maxTimeout = chooseMaxTimeout(limits.timeout_ms ?? LIMIT_DEFAULTS.timeoutMs, limits);
  if (!maxTimeout.ok) return maxTimeout;
  const limitSettings = {
    timeoutMs: limits.timeout_ms ?? LIMIT_DEFAULTS.timeoutMs,
    maxOutputBytes: limits.max_output_bytes ?? LIMIT_DEFAULTS.maxOutputBytes,
    maxConcurrent: limits.max_concurrent ?? LIMIT_DEFAULTS.maxConcurrent,
    queueMax: limits.queue_max ?? LIMIT_DEFAULTS.queueMax,
    queueWaitMs: limits.queue_wait_ms ?? LIMIT_DEFAULTS.queueWaitMs,
    cpuSeconds: limits.cpu_seconds ?? null,
    addressSpaceBytes: limits.address_space_bytes ?? null,
    maxProcesses: limits.max_processes ?? null,
    fileSizeBytes: limits.file_size_bytes ?? null,
    openFiles: limits.open_files ?? null,
    progressIntervalMs: limits.progress_interval_ms ?? LIMIT_DEFAULTS.progressIntervalMs,
    foregroundMs: limits.foreground_ms ?? LIMIT_DEFAULTS.foregroundMs,
    maxTimeoutMs: maxTimeout.value,
    jobOutputBytes: limits.job_output_bytes ?? LIMIT_DEFAULTS.jobOutputBytes,
    jobRetentionMs: (limits.job_retention_s ?? LIMIT_DEFAULTS.jobRetentionS) * 1_000,
    inlineOutputBytes: limits.inline_output_bytes ?? LIMIT_DEFAULTS.inlineOutputBytes,
  };
  const policy: Policy = {
    policyFile,
    jailRoot,
    auditLog: auditLog.value,
    auditFailMode: auditFailMode.value,
    // Only present when set, so a policy without an [audit] table loads as before.
    ...auditSettings.value,
    stateDir: stateDir.value,
    // Only present with a [state] table, so a policy without one hashes as before.
    ...(file.state === undefined ? {} : { state: state.value }),
    allowlist: new FrozenMap(lists.value.allowlist),
    denylist: new FrozenSet(lists.value.denylist),
    rules: lists.value.rules,
    argSchemas: argSchemas.value,
    tests: (file.tests ?? []).map((entry) => ({
      name: entry.name ?? entry.command,
      command: entry.command,
      cwd: entry.cwd ?? null,
      expect: entry.expect,
      reasonContains: entry.reason_contains ?? null,
    })),
    disabledGuards,
    confineArgs,
    // A shell makes a fork bomb one line long: full-control mode never runs without rlimits.
    limits: fullControl.value === null ? limitSettings : withFullControlLimits(limitSettings),
    redaction: {
      enabled: redactionEnabled,
      entropyFallback: redaction.entropy_fallback ?? false,
      extraPatterns,
    },
    envPass: children.value.envPass,
    childEnv: children.value.childEnv,
    showJailPath: file.describe?.show_jail_path ?? false,
    sessions: {
      // Half an hour idle and eight per caller: long enough for a working
      // session, short and few enough that abandoned ones do not pile up.
      idleTtlMs: (file.sessions?.idle_ttl_s ?? 1_800) * 1_000,
      maxPerCaller: file.sessions?.max_per_caller ?? 8,
    },
    links: links.value,
    ...(prompts || file.approval !== undefined ? { approval: approval.value } : {}),
    sandbox: sandbox.value,
    ...(fullControl.value === null ? {} : { fullControl: fullControl.value }),
    http: remote.value.http,
    auth: remote.value.auth,
    // Present only with their tables, so a policy without them loads as before.
    ...(log === undefined ? {} : { log }),
    ...(telemetry.value === undefined ? {} : { telemetry: telemetry.value }),
    warnings,
  };
  return pass(deepFreeze(policy));
}

/**
 * `limits.max_timeout_ms`: never below `timeout_ms`, or a foreground call's
 * own default deadline would be a value no call may ask for.
 */
function chooseMaxTimeout(
  timeoutMs: number,
  limits: { readonly max_timeout_ms?: number | undefined },
): Checked<number> {
  const configured = limits.max_timeout_ms;
  if (configured === undefined) return pass(Math.max(LIMIT_DEFAULTS.maxTimeoutMs, timeoutMs));
  if (configured < timeoutMs) {
    return fail(
      `Policy key "limits.max_timeout_ms" (${configured}) must not be below "limits.timeout_ms" (${timeoutMs}).`,
    );
  }
  return pass(configured);
}

function chooseFailMode(
  envValue: string | undefined,
  file: PolicyFile,
): Checked<AuditFailMode> {
  if (envValue === undefined) return pass(file.audit_fail_mode ?? "closed");
  if (envValue === "closed" || envValue === "open") return pass(envValue);
  return fail(
    `Policy key "audit_fail_mode" (from HTMCP_AUDIT_FAIL_MODE) must be "closed" or "open", got ${
      quote(envValue)
    }.`,
  );
}
