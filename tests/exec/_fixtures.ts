/**
 * Shared setup for executor, sandbox and process-tree tests: a real temp
 * jail (mode 0777 so the sandbox user 65534 may enter and write it), a policy
 * with real resolved binaries, and helpers that find a run's processes on the
 * host through /proc.
 */
import type { Limits, Policy, SandboxMode } from "../../src/config/types.ts";
import { createExecutor, type ExecOutcome, type Executor } from "../../src/exec/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";

export const identity = (text: string): string => text;

export interface Setup {
  readonly jail: string;
  readonly policy: Policy;
  readonly executor: Executor;
  /** Runs `name args...` in the jail (or `cwd`). */
  run(name: string, args: readonly string[], extra?: RunExtra): Promise<ExecOutcome>;
  close(): Promise<void>;
}

export interface RunExtra {
  readonly cwd?: string;
  readonly signal?: AbortSignal;
  readonly redact?: (text: string) => string;
}

export interface SetupOptions {
  readonly mode?: SandboxMode;
  readonly network?: boolean;
  readonly limits?: Partial<Limits>;
  readonly allow?: readonly string[];
}

const DEFAULT_ALLOW = [
  "sh",
  "bash",
  "cat",
  "echo",
  "true",
  "sleep",
  "ls",
  "env",
  "pwd",
  "printf",
  "head",
  "yes",
  "id",
  "dd",
  "setsid",
];

/** A temp jail readable and writable by the sandbox user. */
export async function makeJail(): Promise<string> {
  const jail = await Deno.makeTempDir({ prefix: "htmcp-exec-" });
  await Deno.chmod(jail, 0o777);
  return Deno.realPath(jail);
}

/** Builds a policy and a real executor over a fresh jail; `close()` cleans up. */
export async function setup(options: SetupOptions = {}): Promise<Setup> {
  const jail = await makeJail();
  const policy = makePolicy({
    jailRoot: jail,
    allow: options.allow ?? DEFAULT_ALLOW,
    overrides: {
      sandbox: { mode: options.mode ?? "none", network: options.network ?? false },
      limits: { ...TEST_LIMITS, ...options.limits },
    },
  });
  const built = await createExecutor(policy);
  if (!built.ok) {
    await Deno.remove(jail, { recursive: true });
    throw new Error(built.message);
  }
  const executor = built.executor;
  return {
    jail,
    policy,
    executor,
    run(name, args, extra = {}) {
      const command = policy.allowlist.get(name);
      if (command === undefined) throw new Error(`Test policy does not allow "${name}".`);
      return executor.run({
        callId: crypto.randomUUID(),
        command,
        args,
        cwd: extra.cwd ?? jail,
        redact: extra.redact ?? identity,
        ...(extra.signal === undefined ? {} : { signal: extra.signal }),
      });
    },
    async close() {
      await executor.shutdown();
      await Deno.remove(jail, { recursive: true });
    },
  };
}

/** Host pids with `marker` as one argv word (live or stopped; zombies have no cmdline). */
export function pidsWithMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      // Only processes whose argv[0] is the marked program itself, so the
      // launcher chain (whose argv repeats the whole command) is not counted.
      const argv = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (argv.includes(marker) && !argv.includes("--")) found.push(Number(entry.name));
    } catch {
      // Exited while we looked.
    }
  }
  return found.filter((pid) => pid !== Deno.pid);
}

/** Polls until `count` processes carry `marker`, or throws after `timeoutMs`. */
export async function waitForMarker(
  marker: string,
  count: number,
  timeoutMs = 3_000,
): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const pids = pidsWithMarker(marker);
    if (pids.length >= count) return pids;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(
    `Expected ${count} processes with "${marker}", saw ${pidsWithMarker(marker).length}.`,
  );
}

/**
 * The state letter of `/proc/PID/stat` ("R", "S", "Z"...), or null when the
 * pid does not exist at all: null means dead and reaped, "Z" means dead but
 * not reaped (a zombie, for which `kill -0` still succeeds).
 */
export function procState(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}

/** Asserts every pid is gone from /proc: not alive and not a zombie. */
export function assertAllReaped(pids: readonly number[]): void {
  const left = pids.map((pid) => [pid, procState(pid)] as const).filter(([, s]) => s !== null);
  if (left.length > 0) {
    throw new Error(`Processes still present after return: ${JSON.stringify(left)}.`);
  }
}

/** A marker unique to this test run, usable as a `sleep` duration (`sleep 300.<n>`). */
export function uniqueSleep(): string {
  const digits = String(Math.floor(Math.random() * 1e9)).padStart(9, "0");
  return `300.${digits}`;
}
