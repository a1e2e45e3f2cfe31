/**
 * Kernel resource limits for one command, as `prlimit` arguments. The kernel
 * enforces them on the command and everything it starts (rlimits are
 * inherited across fork and exec), so a fork bomb, a runaway loop, a memory
 * hog, a disk filler or an fd leak ends at a limit instead of hurting the host.
 *
 * Pure: policy in, argv out.
 *
 * @module
 */
import type { Limits } from "../config/types.ts";

/** Seconds between the soft CPU limit (SIGXCPU, catchable) and the hard one (SIGKILL). */
export const CPU_HARD_GRACE_SECONDS = 1;

/**
 * `prlimit` options for `limits`, or `[]` when no limit is set.
 *
 * Soft and hard values are equal (so the command cannot raise them back),
 * except CPU, whose hard limit is one second later: SIGXCPU first lets a
 * well-behaved program stop, SIGKILL then ends one that ignores it.
 *
 * - `cpuSeconds` -> RLIMIT_CPU: CPU time of each process.
 * - `addressSpaceBytes` -> RLIMIT_AS: virtual memory of each process.
 * - `maxProcesses` -> RLIMIT_NPROC: processes (threads) of the command's real
 *   uid, counted across the whole machine. Commands never run as root (who
 *   would be exempt), so it binds in every mode; every command of the same
 *   run-as uid, and that uid's other processes, share it.
 * - `fileSizeBytes` -> RLIMIT_FSIZE: largest file a process may write (SIGXFSZ).
 * - `openFiles` -> RLIMIT_NOFILE: open descriptors per process.
 *
 * @param limits The policy's limits.
 * @returns Options to place between `prlimit` and `--`.
 */
export function prlimitOptions(limits: Limits): string[] {
  const out: string[] = [];
  if (limits.cpuSeconds !== null) {
    out.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + CPU_HARD_GRACE_SECONDS}`);
  }
  if (limits.addressSpaceBytes !== null) out.push(`--as=${limits.addressSpaceBytes}`);
  if (limits.maxProcesses !== null) out.push(`--nproc=${limits.maxProcesses}`);
  if (limits.fileSizeBytes !== null) out.push(`--fsize=${limits.fileSizeBytes}`);
  if (limits.openFiles !== null) out.push(`--nofile=${limits.openFiles}`);
  return out;
}

/**
 * The argv prefix that applies `limits` and then executes what follows, or
 * `[]` when no limit is set (saves one exec per call).
 */
export function rlimitPrefix(limits: Limits, prlimitPath: string): string[] {
  const options = prlimitOptions(limits);
  return options.length === 0 ? [] : [prlimitPath, ...options, "--"];
}
