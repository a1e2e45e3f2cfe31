/**
 * How many connections the HTTP server may hold open, derived from the
 * process's file-descriptor limit.
 *
 * Threat: an unauthenticated client that opens idle TCP connections until the
 * process runs out of descriptors. Then the audit log cannot be reopened, a
 * command's pipes cannot be created and accepting fails. The server refuses
 * connections beyond a limit that keeps a reserve for everything else.
 *
 * Deno has no `getrlimit`. The limit is read, in order, from
 * `HTMCP_FD_LIMIT` (the launcher reads its own soft limit, which the server
 * inherits, and passes it on), from `/proc/self/limits` (readable only with
 * all permissions: development and tests), else assumed to be 1024, the usual
 * Linux soft default, which errs on the small side.
 *
 * @module
 */

/** Where the descriptor limit came from. */
export type FdLimitSource = "HTMCP_FD_LIMIT" | "/proc/self/limits" | "assumed";

/** The descriptor limit and the connection limit derived from it. */
export interface FdBudget {
  /** The process's soft limit on open file descriptors (`RLIMIT_NOFILE`). */
  readonly fdLimit: number;
  /** Where {@linkcode FdBudget.fdLimit} was read, so an assumed limit shows as one. */
  readonly source: FdLimitSource;
  /** Descriptors kept back for the runtime, the audit log, the state dir and commands' pipes. */
  readonly reserve: number;
  /** Connections the server holds open at most. */
  readonly maxConnections: number;
  /** Set when a configured `max_connections` eats into the reserve. */
  readonly warning: string | null;
}

/** The soft limit assumed when none can be read. */
export const ASSUMED_FD_LIMIT = 1024;

/**
 * The runtime's own descriptors (epoll, event fds, stdio, worker threads), the
 * audit log and its lock, the state dir's files, with room to spare.
 */
const BASE_RESERVE = 64;
/** A running command holds its three pipes' ends, a pidfd and the sandbox's sync pipes. */
const PER_COMMAND_RESERVE = 8;
/** Fewer than this would make the server useless; a tiny fd limit still gets a few. */
const MIN_CONNECTIONS = 4;

/**
 * Reads the descriptor limit.
 *
 * @param env Reads one environment variable (unreadable counts as unset).
 * @param readProc Reads `/proc/self/limits` (throws when not permitted).
 * @returns The soft limit and where it was read; 1024, `"assumed"`, when neither source gives one.
 */
export function readFdLimit(
  env: (name: string) => string | undefined = safeEnv,
  readProc: () => string = () => Deno.readTextFileSync("/proc/self/limits"),
): { readonly limit: number; readonly source: FdLimitSource } {
  const fromEnv = env("HTMCP_FD_LIMIT");
  if (fromEnv !== undefined && /^\d{1,9}$/.test(fromEnv.trim()) && Number(fromEnv) > 0) {
    return { limit: Number(fromEnv), source: "HTMCP_FD_LIMIT" };
  }
  try {
    const limit = parseProcLimits(readProc());
    if (limit !== null) return { limit, source: "/proc/self/limits" };
  } catch {
    // Not permitted under the generated permission set: fall through.
  }
  return { limit: ASSUMED_FD_LIMIT, source: "assumed" };
}

/** The soft "Max open files" value of a `/proc/PID/limits` text, or null. */
export function parseProcLimits(text: string): number | null {
  const line = text.split("\n").find((l) => l.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  if (soft === undefined || !/^\d+$/.test(soft)) return null;
  return Number(soft);
}

/**
 * The connection limit: `configured` when set (non-zero), else the descriptor
 * limit minus the reserve.
 *
 * @param fd The descriptor limit and its source.
 * @param configured `[http] max_connections` (0 = derive).
 * @param maxConcurrent `[limits] max_concurrent` (commands' pipes).
 * @returns The budget, with a warning when `configured` eats into the reserve.
 *
 * @example
 * ```ts
 * import { fdBudget } from "./fd_budget.ts";
 * const budget = fdBudget({ limit: 1024, source: "assumed" }, 0, 4);
 * budget.maxConnections; // 928: 1024 minus 64 for the process and 8 for each of 4 commands
 * ```
 */
export function fdBudget(
  fd: { readonly limit: number; readonly source: FdLimitSource },
  configured: number,
  maxConcurrent: number,
): FdBudget {
  const reserve = BASE_RESERVE + PER_COMMAND_RESERVE * maxConcurrent;
  const derived = Math.max(MIN_CONNECTIONS, fd.limit - reserve);
  if (configured === 0) {
    return {
      fdLimit: fd.limit,
      source: fd.source,
      reserve,
      maxConnections: derived,
      warning: null,
    };
  }
  const warning = configured > derived
    ? `http.max_connections = ${configured} leaves fewer than ${reserve} of the ${fd.limit} file descriptors (${fd.source}) for the audit log and commands; at most ${derived} would keep that reserve.`
    : null;
  return { fdLimit: fd.limit, source: fd.source, reserve, maxConnections: configured, warning };
}

/**
 * Describes a budget in one line, for the startup log and `htmcp check`.
 *
 * @param budget What {@linkcode fdBudget} derived.
 * @returns `file descriptors: limit 1024 (assumed), 96 reserved, at most 928 HTTP connections`.
 */
export function describeFdBudget(budget: FdBudget): string {
  return `file descriptors: limit ${budget.fdLimit} (${budget.source}), ${budget.reserve} reserved, at most ${budget.maxConnections} HTTP connections`;
}

function safeEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
