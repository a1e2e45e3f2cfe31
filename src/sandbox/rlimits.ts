/**
 * Kernel resource limits for one command. The kernel enforces them on the
 * command and everything it starts (rlimits are inherited across fork and
 * exec), so a fork bomb, a runaway loop, a memory hog, a disk filler or an fd
 * leak ends at a limit instead of hurting the host. The launcher helper sets
 * them just before the command's exec (`rlimitOptions` in `src/exec/launcher.ts`):
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
 * @module
 */

/**
 * Seconds between the soft CPU limit (SIGXCPU, catchable) and the hard one
 * (SIGKILL): a well-behaved program may stop first, one that ignores it dies.
 */
export const CPU_HARD_GRACE_SECONDS = 1;
