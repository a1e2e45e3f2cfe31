/**
 * `[mode] full_control`: shell strings run by `bash -c`, interpreters
 * allowed, and the kernel sandbox as the boundary that replaces the parser.
 *
 * Fails closed: the mode does not load with `[sandbox] mode = "none"`,
 * because without the mount, PID and network namespaces a shell string is a
 * shell on the host; the executor refuses it again should a policy be built
 * any other way. Unset rlimits get defaults here, since a shell makes fork
 * bombs, disk fillers and runaway loops one line long.
 *
 * @module
 */
import { type Checked, fail, pass } from "./_checked.ts";
import { resolveCommand } from "./commands.ts";
import type { PolicyFile } from "./schema.ts";
import type { FullControlSettings, Limits, SandboxSettings } from "./types.ts";
import { FULL_CONTROL_WARNING } from "../full_control/notice.ts";

/** The shell full-control text runs in. */
export const FULL_CONTROL_SHELL = "bash";

/**
 * Rlimits full-control mode sets when the policy leaves them unset. No
 * address-space default: V8, the JVM and Go reserve far more virtual memory
 * than they use, and a cap low enough to matter breaks them.
 */
export const FULL_CONTROL_RLIMITS: Readonly<{
  /** `RLIMIT_NPROC`: enough for a build, not for a fork bomb. */
  maxProcesses: number;
  /** `RLIMIT_FSIZE` in bytes: the largest file one write may grow. */
  fileSizeBytes: number;
  /** `RLIMIT_NOFILE`: open descriptors per process. */
  openFiles: number;
}> = Object.freeze({
  maxProcesses: 1024,
  fileSizeBytes: 1024 * 1024 * 1024,
  openFiles: 4096,
});

/**
 * Why these settings may not run full-control mode, or null: it needs the
 * kernel sandbox. The one predicate, used by the loader and the executor.
 *
 * @param sandbox The `[sandbox]` settings (only `mode` is read).
 * @returns The startup refusal sentence, or null when full control may run.
 */
export function fullControlRefusal(sandbox: Pick<SandboxSettings, "mode">): string | null {
  if (sandbox.mode !== "none") return null;
  return 'Policy key "mode.full_control" is true, which runs shell strings with bash, and that is only allowed inside the kernel sandbox; [sandbox] mode is "none", so the server refuses to start: set [sandbox] mode = "bwrap" or full_control = false.';
}

/**
 * The `[mode]` settings of `file`.
 *
 * @param file The validated policy file.
 * @param sandbox The `[sandbox]` settings already built.
 * @param pathDirs The child PATH folders (the shell is resolved on them).
 * @param warnings Startup warnings; the mode adds its loud one.
 * @returns The settings (null when off), or one sentence naming the key.
 */
export async function buildFullControl(
  file: PolicyFile,
  sandbox: SandboxSettings,
  pathDirs: readonly string[],
  warnings: string[],
): Promise<Checked<FullControlSettings | null>> {
  if (file.mode?.full_control !== true) return pass(null);
  const refusal = fullControlRefusal(sandbox);
  if (refusal !== null) return fail(refusal);
  const shell = await resolveCommand(FULL_CONTROL_SHELL, pathDirs);
  if (!shell.ok) {
    return fail(
      `Policy key "mode.full_control" is true, but "${FULL_CONTROL_SHELL}" is not an executable file on the child PATH "${
        pathDirs.join(":")
      }"; install bash or set full_control = false.`,
    );
  }
  warnings.push(FULL_CONTROL_WARNING);
  return pass(Object.freeze({ shell: shell.value }));
}

/** `limits` with full-control mode's rlimit defaults filled in where unset. */
export function withFullControlLimits(limits: Limits): Limits {
  return {
    ...limits,
    cpuSeconds: limits.cpuSeconds ?? Math.ceil(limits.timeoutMs / 1000),
    maxProcesses: limits.maxProcesses ?? FULL_CONTROL_RLIMITS.maxProcesses,
    fileSizeBytes: limits.fileSizeBytes ?? FULL_CONTROL_RLIMITS.fileSizeBytes,
    openFiles: limits.openFiles ?? FULL_CONTROL_RLIMITS.openFiles,
  };
}
