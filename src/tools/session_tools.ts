/**
 * `session_start` and `session_end`. A session keeps a working directory
 * across `run_command` calls; starting one returns an environment report the
 * model can choose tools from.
 *
 * The report is built from an explicit allowlist of facts: OS and
 * architecture tokens, the session's jail-relative cwd, the allowlisted
 * command names, git's branch and dirty state when git is allowlisted, and
 * the limits. Never environment values, host paths (the cwd is jail-relative),
 * secrets, the denylist or where the audit log is: a model that learns them
 * learns nothing it needs and an attacker steering it learns a great deal.
 * Command versions are probed by running `NAME --version` through
 * `run_command` itself (full policy, sandbox, audit: each probe is an ordinary
 * audited call), two at a time, each cut off after `VERSION_PROBE_MS`; only a
 * version token (`4.9`, `2.39.5`) from the first line of a successful probe is
 * reported, anything else is "not available": never raw output or stderr.
 *
 * @module
 */
import * as z from "zod";
import type { ServerContext } from "../context/mod.ts";
import { type CallerIdentity, hasScope } from "./caller.ts";
import { runCommandTool } from "./run_command.ts";
import { evaluateArgv } from "../policy/mod.ts";
import { sessionNotFound, sessionOwner, sessionsFor } from "../session/mod.ts";

export const SESSION_START_DESCRIPTION =
  "Start a session: later run_command calls with its session_id run in the session's " +
  "working directory, and a command that starts with cd DIR moves it (cd DIR alone too). " +
  "Returns the session id and an environment report: OS, architecture, the session's " +
  "folder (relative to the jail), the allowed commands and their versions, git's branch and dirty state when " +
  "git is allowed, and the limits. Sessions expire when unused; end one with session_end.";

export const SESSION_END_DESCRIPTION = "End a session started with session_start.";

export const SESSION_REPORT_SHAPE = {
  ok: z.boolean(),
  session_id: z.string().nullable(),
  reason: z.string(),
  idle_ttl_s: z.number(),
  os: z.string(),
  arch: z.string(),
  cwd: z.string(),
  commands: z.array(z.string()),
  versions: z.record(z.string(), z.string()),
  git: z.object({ branch: z.string().nullable(), dirty: z.boolean() }).nullable(),
  limits: z.object({
    timeout_ms: z.number(),
    max_output_bytes: z.number(),
    max_concurrent: z.number(),
  }),
};

export type SessionReport = {
  ok: boolean;
  session_id: string | null;
  reason: string;
  idle_ttl_s: number;
  os: string;
  arch: string;
  cwd: string;
  commands: string[];
  versions: Record<string, string>;
  git: { branch: string | null; dirty: boolean } | null;
  limits: { timeout_ms: number; max_output_bytes: number; max_concurrent: number };
};

/** How long one version probe may run before it counts as "not available". */
export const VERSION_PROBE_MS = 2_000;

/** At most this many commands are probed (the report stays small and quick). */
export const MAX_VERSION_PROBES = 32;

/** A version token: digits and dots, optionally a short suffix (`1.2.3`, `3.11.7`, `9.4p1`). */
const VERSION_TOKEN = /\b(\d+(?:\.\d+)+[a-z0-9]{0,4})\b/i;

/**
 * Each allowlisted command's version token, probed through `run_command`
 * (so the policy, the sandbox and the audit apply to every probe), two at a
 * time: a failed, refused, slow or unparsable probe is "not available".
 */
async function commandVersions(
  context: ServerContext,
  caller: CallerIdentity,
): Promise<Record<string, string>> {
  const names = [...context.policy.allowlist.keys()].sort().slice(0, MAX_VERSION_PROBES);
  const versions: Record<string, string> = Object.create(null);
  const probe = async (name: string) => {
    // A command held for a human on every run (or on --version) is not
    // probed: the probe would file an approval request nobody asked for.
    const judged = evaluateArgv([name, "--version"], context.policy);
    if (judged.ok && judged.prompt !== null) {
      versions[name] = "not probed (held for approval)";
      return;
    }
    const result = await runCommandTool(
      context,
      caller,
      { argv: [name, "--version"] },
      AbortSignal.timeout(VERSION_PROBE_MS),
    );
    const first = result.code === "OK" && result.exit_code === 0
      ? (result.stdout.split("\n", 1)[0] ?? "").slice(0, 200)
      : "";
    versions[name] = VERSION_TOKEN.exec(first)?.[1] ?? "not available";
  };
  // Two at a time: well under any max_concurrent, so probes are not BUSY.
  for (let at = 0; at < names.length; at += 2) {
    await Promise.all(names.slice(at, at + 2).map(probe));
  }
  return { ...versions };
}

/**
 * git's branch and dirty state, asked through `run_command` itself (full
 * policy, jail, sandbox, audit), so the report can show nothing the policy
 * would not let the model see. Null when git is not allowed or the jail is
 * not a repository git may read.
 */
async function gitState(
  context: ServerContext,
  caller: CallerIdentity,
): Promise<SessionReport["git"]> {
  if (!context.policy.allowlist.has("git")) return null;
  const result = await runCommandTool(context, caller, {
    argv: ["git", "status", "--porcelain=v1", "--branch"],
  });
  if (result.code !== "OK" || result.exit_code !== 0) return null;
  const [head = "", ...changes] = result.stdout.split("\n").filter((line) => line !== "");
  // "## main...origin/main [ahead 1]", "## No commits yet on main", "## HEAD (no branch)".
  const text = head.startsWith("## No commits yet on ") ? head.slice(21) : head.slice(3);
  const name = text.split("...")[0]?.split(" ")[0] ?? "";
  const branch = name === "" || text.startsWith("HEAD (no branch)") ? null : name;
  return { branch, dirty: changes.length > 0 };
}

function baseReport(context: ServerContext): Omit<SessionReport, "ok" | "session_id" | "reason"> {
  const { policy } = context;
  return {
    idle_ttl_s: policy.sessions.idleTtlMs / 1000,
    os: Deno.build.os,
    arch: Deno.build.arch,
    cwd: ".",
    commands: [...policy.allowlist.keys()].sort(),
    versions: {},
    git: null,
    limits: {
      timeout_ms: policy.limits.timeoutMs,
      max_output_bytes: policy.limits.maxOutputBytes,
      max_concurrent: policy.limits.maxConcurrent,
    },
  };
}

/**
 * The model's sentence when the store fails; the details (which name the
 * state directory) go to the server's stderr for the operator only.
 */
function storeFailed(error: unknown): string {
  console.error(`htmcp: the session store failed: ${error}`);
  return "The session store is not usable right now; nothing changed.";
}

/**
 * Starts a session for `caller`.
 *
 * @param context The server context.
 * @param caller Who is calling; the session is theirs alone.
 */
export async function sessionStartTool(
  context: ServerContext,
  caller: CallerIdentity,
): Promise<SessionReport> {
  const report = baseReport(context);
  const refuse = (reason: string) => ({ ...report, ok: false, session_id: null, reason });
  // A session exists to run commands, and its report runs git: the same scope as run_command.
  if (!hasScope(caller, "shell:execute")) {
    return refuse('This token lacks the "shell:execute" scope that session_start needs.');
  }
  const sessions = sessionsFor(context.policy);
  if (sessions === null) {
    return refuse("Sessions need a state_dir in the policy, and this server has none.");
  }
  let started;
  try {
    started = await sessions.start(sessionOwner(caller.clientId));
  } catch (error) {
    return refuse(storeFailed(error));
  }
  if (!started.ok) return refuse(started.reason);
  return {
    ...report,
    ok: true,
    session_id: started.session.id,
    reason: "Session started in the jail root.",
    versions: await commandVersions(context, caller),
    git: await gitState(context, caller),
  };
}

/**
 * Ends `rawInput.session_id` for `caller`; another caller's id is "not found".
 */
export async function sessionEndTool(
  context: ServerContext,
  caller: CallerIdentity,
  rawInput: unknown,
): Promise<{ ok: boolean; reason: string }> {
  const id = rawInput !== null && typeof rawInput === "object"
    ? (rawInput as Record<string, unknown>)["session_id"]
    : undefined;
  if (!hasScope(caller, "shell:execute")) {
    return {
      ok: false,
      reason: 'This token lacks the "shell:execute" scope that session_end needs.',
    };
  }
  if (typeof id !== "string") return { ok: false, reason: "The session_id must be a string." };
  const sessions = sessionsFor(context.policy);
  if (sessions === null) {
    return {
      ok: false,
      reason: "Sessions need a state_dir in the policy, and this server has none.",
    };
  }
  let ended;
  try {
    ended = await sessions.end(sessionOwner(caller.clientId), id);
  } catch (error) {
    return { ok: false, reason: storeFailed(error) };
  }
  return ended
    ? { ok: true, reason: "Session ended." }
    : { ok: false, reason: sessionNotFound(id) };
}
