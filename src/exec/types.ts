/**
 * The executor's contract: what a caller hands over (an already checked
 * command, argv and jail-confined cwd) and the one outcome it gets back.
 *
 * Everything that can go wrong while running an allowed command is a value
 * here (`ExecOutcome.code`), never a throw: the caller maps it to the wire
 * once, at the edge.
 *
 * @module
 */
import type { FolderLister } from "../jail/mod.ts";
import type { ResolvedCommand } from "../config/types.ts";
import type { Redactor } from "../redact/mod.ts";
import type { CommandPlan, StageStatus } from "./plan.ts";

/** The subset of result codes the executor itself can produce. */
export type ExecOutcomeCode =
  | "OK"
  | "OUTPUT_TRUNCATED"
  | "TIMEOUT"
  | "CANCELLED"
  | "EXECUTOR_ERROR"
  | "RUNTIME_DENIED"
  | "CONTAINMENT_UNAVAILABLE";

/** One command to run. Env, timeout, caps and limits come from the executor's policy. */
export interface ExecRequest {
  /** Correlates the run with its audit records. */
  readonly callId: string;
  /** The allowlisted command as resolved at startup; `command.path` is executed. */
  readonly command: ResolvedCommand;
  /** argv after the command word, passed verbatim (never re-tokenized, never a shell). */
  readonly args: readonly string[];
  /** Variables added to the child environment (the policy's run specification). */
  readonly env?: Readonly<Record<string, string>>;
  /** The jail-confined real path to run in. */
  readonly cwd: string;
  /**
   * The server's redactor: output is redacted and cut through its spans
   * (`redactAndTruncate`), so the cap is placed around each secret exactly;
   * it redacts the reason sentences too. A redactor built with redaction
   * disabled shows output as the command wrote it (only the cap applies).
   */
  readonly redactor: Redactor;
  /** Aborting kills the command's whole process tree; the outcome is `CANCELLED`. */
  readonly signal?: AbortSignal;
  /**
   * Bytes for the command's standard input, written through a pipe and then
   * closed; absent = /dev/null. Only for one command: a plan's helper reads
   * the plan from its stdin and gives the stages /dev/null.
   */
  readonly stdin?: Uint8Array;
  /**
   * This run's deadline in ms (default `limits.timeoutMs`); the caller
   * bounds it by `limits.maxTimeoutMs`. The helper's backstop moves with it.
   */
  readonly timeoutMs?: number;
  /**
   * Sees every chunk of output as it is read, before any redaction (for a
   * running job's progress, which redacts what it shows). Must not throw.
   */
  readonly live?: OutputObserver;
  /**
   * The start signal: the tree is set up at once, but the command (every
   * stage of a plan) is executed only once this resolves true, which the
   * caller makes it do once the call's attempt record is durable; false
   * ends the run having executed nothing (its outcome is then meaningless,
   * and `CANCELLED`). Absent: the command starts at once. The deadline
   * counts from the spawn, so waiting for the go never lengthens it.
   */
  readonly go?: Promise<boolean>;
}

/** Receives raw output chunks while a command runs. */
export interface OutputObserver {
  /**
   * Called once per chunk read from the command, in order per stream.
   *
   * @param stream Which stream the chunk came from.
   * @param chunk The raw bytes, unredacted: the observer redacts what it shows; it must not throw.
   */
  push(stream: "stdout" | "stderr", chunk: Uint8Array): void;
}

/** How one run ended. */
export interface ExecOutcome {
  /** What happened, as the one result code the caller maps to the wire. */
  readonly code: ExecOutcomeCode;
  /** Redacted, then truncated, standard output. */
  readonly stdout: string;
  /** Redacted, then truncated, standard error. */
  readonly stderr: string;
  /**
   * The command's exit status. A command killed by signal N reports 128+N,
   * as a shell does (the launcher turns signals into statuses). Null
   * when it did not run or when we killed it.
   */
  readonly exitCode: number | null;
  /** The signal we used to end the tree (`"SIGKILL"`), or null when it ended by itself. */
  readonly signal: string | null;
  /** Total bytes the command wrote to stdout, including bytes beyond the cap. */
  readonly stdoutBytes: number;
  /** Total bytes the command wrote to stderr, including bytes beyond the cap. */
  readonly stderrBytes: number;
  /** True when stdout or stderr was cut at `limits.maxOutputBytes`. */
  readonly truncated: boolean;
  /** A sentence saying how the run ended. */
  readonly reason: string;
  /** Wall time from spawn to reaping, in milliseconds. */
  readonly durationMs: number;
}

/** Extra argv/env a command needs for safety (git hardening): `src/policy/`'s type. */
export type { CommandHardening } from "../policy/mod.ts";

/** One startup probe's result, shown by `htmcp check`. */
export interface ProbeResult {
  /** Which probe ran (the launch plan it tried). */
  readonly name: string;
  /** True when the plan ran a command as commands will run, with every property seen. */
  readonly ok: boolean;
  /** One phrase: how long it took when it passed, what went wrong when it did not. */
  readonly detail: string;
  /** True when the failure is the command's uid being unable to search or write the jail. */
  readonly jailAccess?: boolean;
}

/** The executor's state for `htmcp check` and `describe_policy`. */
export interface ExecutorDescription {
  /** `[sandbox] mode` as configured (`"auto"` means `"bwrap"`). */
  readonly requestedMode: "none" | "bwrap" | "auto";
  /**
   * What actually runs commands: `"bwrap"` (kernel sandbox) or `"none"`
   * (process-tree containment only, the jail advisory; only ever with
   * `accept_path_check_only = true`). Never differs from the request but
   * for `"auto"` -> `"bwrap"`: there is no fallback.
   */
  readonly mode: "none" | "bwrap";
  /** The one binary Deno spawns, once (the launcher helper; every command runs in a process tree it creates). */
  readonly launcherPath: string;
  /** Every binary the launcher executes before the command, in exec order. */
  readonly chain: readonly string[];
  /** The server's uid as seen by the probe. */
  readonly serverUid: number;
  /** The host uid commands run as (never 0): the run-as identity, or the server's own uid. */
  readonly commandUid: number;
  /** The host gid commands run as. */
  readonly commandGid: number | null;
  /** Where `commandUid` came from ("the jail's owner", "[sandbox] user", "the server's own uid"). */
  readonly commandUidSource: string;
  /** One sentence: which mode was chosen and why. */
  readonly summary: string;
  /** The startup probes, in the order they ran; a failed one is why a mode was refused. */
  readonly probes: readonly ProbeResult[];
}

/** Runs allowed commands inside process-tree containment (and the sandbox when enabled). */
export interface Executor {
  /**
   * Lists a folder of the jail for the path checks by descriptor, through
   * the helper, never through a link (`list_beneath.ts`): what the checks of
   * every call this executor runs are given.
   */
  readonly listFolder: FolderLister;
  /**
   * Runs one command; never throws for expected failures.
   *
   * @param request The checked command, its arguments, cwd and redactor.
   * @returns How it ended, its output redacted then capped.
   */
  run(request: ExecRequest): Promise<ExecOutcome>;
  /**
   * Runs a plan (pipelines, sequences, cd, redirections) of already judged
   * stages inside one containment; never throws for expected failures.
   *
   * @param request The checked plan, its cwd and redactor.
   * @returns How the whole ended, and every stage's status.
   */
  runPlan(request: PlanRequest): Promise<PlanOutcome>;
  /** Kills and reaps every running command; later `run` calls return `CANCELLED`. */
  shutdown(): Promise<void>;
  /** What was chosen at startup and why; fixed for the executor's life. */
  describe(): ExecutorDescription;
  /** Binaries the server process itself spawns: what `--allow-run` must list. */
  launcherPaths(): string[];
  /**
   * The serving helper's pid while it runs (from the startup probe on),
   * else null: every call's process tree hangs below it.
   */
  helperPid(): number | null;
}

/**
 * What `createExecutor` built: the executor, or the one sentence saying why
 * containment cannot be set up (the server then does not start).
 */
export type CreateExecutorResult =
  | { readonly ok: true; readonly executor: Executor }
  | { readonly ok: false; readonly message: string };

/**
 * A checked plan to run: every stage already judged by the policy, its argv
 * complete (each stage's run specification, git's `-c` overrides included:
 * the audit records exactly that argv). The stages share one environment:
 * `env` is added to the policy's child environment for all of them.
 */
export interface PlanRequest extends Omit<ExecRequest, "command" | "args" | "stdin"> {
  /** Names the plan in sentences (for example the first stage's command name). */
  readonly name: string;
  /** The plan; `plan.cwd` must equal `cwd`. */
  readonly plan: CommandPlan;
}

/** How a plan ended: the outcome of the whole, and every stage's status. */
export interface PlanOutcome extends ExecOutcome {
  /**
   * One entry per stage in plan order (a `cd` counts as one): its exit status
   * (128+N for signal N), or null when a sequence skipped it. Empty when the
   * plan did not finish by itself (timeout, cancellation, setup failure).
   */
  readonly stages: readonly StageStatus[];
}
