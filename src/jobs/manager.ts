/**
 * The jobs of one server process: runs that outlive the MCP request that
 * started them, by choice (`background: true`) or because the reply could
 * not wait (`limits.foreground_ms`).
 *
 * Ownership of a run: the job manager, never the request. A job's process
 * tree obeys the job's own `AbortController` (cancelled by `job_cancel`, by
 * a cancel request another server wrote into the record, or by the
 * executor's shutdown), so a client that goes away does not end it, and
 * nothing but those three does.
 *
 * Every job start, end, cancel request, loss and expiry is audited; the
 * command's own attempt record was written before it started, and its
 * outcome record is written when it ends, as for every call.
 *
 * @module
 */
import type { AuditLog } from "../audit/mod.ts";
import type { Policy } from "../config/types.ts";
import type { Redactor } from "../redact/mod.ts";
import type { CommandResult } from "../result/codes.ts";
import { every, sleep, type Timer } from "../timers/mod.ts";
import { HEARTBEAT_MS, JobStore } from "./store.ts";
import { isLiveState, type JobOrigin, type JobRecord } from "./records.ts";
import type { LiveOutput } from "./live_output.ts";
import { capStored } from "./paging.ts";
import { stateStoreFor } from "../state/mod.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** A run became a job (at its start, or when its reply could wait no longer). */
    job_started: {
      readonly job_id: string;
      readonly call_id: string;
      readonly client_id: string | null;
      readonly origin: string;
      readonly timeout_ms: number;
    };
    /** A job ended; its outcome record (same call_id) has the details. */
    job_ended: {
      readonly job_id: string;
      readonly call_id: string;
      readonly client_id: string | null;
      readonly result_code: string;
      readonly exit_code: number | null;
      readonly reason: string;
    };
    /** `job_cancel` was called; `via` says whether this server or the owning one kills it. */
    job_cancel_requested: {
      readonly job_id: string;
      readonly client_id: string | null;
      readonly via: "this_server" | "state_dir";
    };
    /** A running job whose server stopped without recording its end. */
    job_lost: { readonly job_id: string; readonly call_id: string; readonly server_pid: number };
    /** An ended job's record and output were deleted after `limits.job_retention_s`. */
    job_expired: { readonly job_id: string; readonly call_id: string };
  }
}

/**
 * What the job manager uses of the server context: the policy's limits and
 * state store, the audit log, the redactor, and the call tracker that lets
 * shutdown wait for a job's outcome record. A `ServerContext` is one; the
 * executor and the concurrency limiter stay out of reach, since a job's run
 * was started (and its slot taken) before the manager sees it.
 */
export interface JobContext {
  /** The frozen policy: `limits` sizes and times the jobs, its state settings pick the store. */
  readonly policy: Policy;
  /** Where every job start, end, cancel request, loss and expiry is written. */
  readonly audit: AuditLog;
  /** Redacts the stored command, argv and progress tail. */
  readonly redactor: Redactor;
  /** Registers a job's end as a call in flight, so closing the server waits for its records. */
  track<T>(call: Promise<T>): Promise<T>;
}

/**
 * What run_command hands over once the command has started: who asked,
 * what runs, and the handles the manager needs to watch, stop and record it.
 */
export interface JobLaunch {
  /** The job's id (`newJobId`), chosen before the run so the reply can name it. */
  readonly id: string;
  /** The caller's owner key (`local`, or `client:<id>`): the only one who sees the job. */
  readonly owner: string;
  /** The OAuth client id for the audit records; null on stdio or HTTP without OAuth. */
  readonly clientId: string | null;
  /** The call's audit id: its attempt and outcome records carry it. */
  readonly callId: string;
  /** The command text and argv (redacted here before they are stored). */
  readonly command: string;
  /** The argv that runs, as in the audit attempt (redacted before it is stored). */
  readonly argv: readonly string[];
  /** Jail-relative working directory. */
  readonly cwd: string;
  /** The run's deadline in milliseconds, after which its tree is killed. */
  readonly timeoutMs: number;
  /** When the run started (epoch milliseconds). */
  readonly startedMs: number;
  /** The run's own controller: aborting it kills the tree. */
  readonly controller: AbortController;
  /** The observer of the run's raw output: byte counts and the progress tail. */
  readonly live: LiveOutput;
  /** The run and its outcome record, already under way. */
  readonly result: Promise<CommandResult>;
  /** Frees the concurrency slot; called once, when the run has ended. */
  readonly release: () => void;
  /** The approval the run was held for, when a prompt rule held it. */
  readonly approvalId?: string;
}

/**
 * A job this server holds until its approval is answered: nothing runs yet,
 * but the job is this server's to start, end or withdraw (so it is alive in
 * the sweep while this server beats).
 */
export interface HeldJob {
  /** The caller's owner key: only this owner may cancel or wait for it. */
  readonly owner: string;
  /** Resolves when the hold ends: the job ended unrun, or its run was adopted here. */
  readonly done: Promise<void>;
  /** Withdraws the job (`job_cancel` here, or a cancel request another server recorded). */
  cancel(): void;
}

/** A run the manager holds, as `adopt` returns it to the call that started it. */
export interface RunningJob {
  /** Resolves when the run ended and what it keeps is stored; `kept` says whether a record exists. */
  readonly done: Promise<{ result: CommandResult; kept: boolean }>;
  /** Makes the run a job: a running record (visible to its owner everywhere) and `job_started`. */
  persist(origin: Exclude<JobOrigin, "foreground">): Promise<void>;
}

interface Entry {
  readonly launch: JobLaunch;
  durable: boolean;
  origin: JobOrigin;
  /** Serializes this job's store writes: the running record always before the ended one. */
  chain: Promise<void>;
  done: Promise<{ result: CommandResult; kept: boolean }>;
  lastTail: string;
  lastTailMs: number;
  /** The running record and `job_started` are written. */
  persisted: boolean;
  /** The run ended (its end step began). */
  ended: boolean;
}

/** Waits at most this long in `job_cancel` for the tree to be dead and the end recorded. */
export const CANCEL_WAIT_MS = 10_000;
const POLL_MS = 200;

/**
 * The jobs of one server process: it takes over started runs (`adopt`),
 * makes them durable jobs on request, holds jobs waiting for their approval,
 * cancels and waits for jobs across servers sharing the state store, and
 * sweeps lost and expired ones. Get the process's one manager with
 * {@linkcode jobsFor} rather than constructing another, whose heartbeat and
 * sweep would be a second server's.
 *
 * @example
 * ```ts
 * import { jobsFor, type JobContext } from "./mod.ts";
 * declare const context: JobContext; // a ServerContext from createServerContext
 * const jobs = jobsFor(context);
 * if (jobs !== null) {
 *   const record = await jobs.waitForEnd("local", "job_abc", 5_000);
 *   console.log(record?.state); // "ended", or "running" when 5 s were not enough
 * }
 * ```
 */
export class JobManager {
  /** The job records and output, in the policy's state store. */
  readonly store: JobStore;
  /** This server process's identity in job records and its heartbeat. */
  readonly writer: string = crypto.randomUUID();
  readonly #context: JobContext;
  readonly #running = new Map<string, Entry>();
  readonly #held = new Map<string, HeldJob>();
  #ticker: Timer | undefined;

  /**
   * A manager over `store`; {@linkcode jobsFor} builds the process's one.
   *
   * @param context What the jobs are run under: policy limits, audit log, redactor, call tracker.
   * @param store The jobs' records, in the policy's state store.
   */
  constructor(context: JobContext, store: JobStore) {
    this.#context = context;
    this.store = store;
  }

  /** True when `id` is a durable job running in this process. */
  isRunningHere(id: string): boolean {
    return this.#running.get(id)?.durable === true || this.#held.has(id);
  }

  /**
   * Holds a job that waits for its approval. Called before its record is
   * written, so no sweep in between can find it without a live server.
   */
  hold(id: string, job: HeldJob): void {
    this.#held.set(id, job);
    this.#startTicker();
    job.done.finally(() => {
      this.#held.delete(id);
      this.#stopTickerWhenIdle();
    });
  }

  /**
   * Takes over a started run. Its slot is released when it ends, whoever
   * waits for it. Nothing is stored until `persist` is called, or until the
   * run ends with more output than the reply can carry.
   */
  adopt(launch: JobLaunch): RunningJob {
    const entry: Entry = {
      launch,
      durable: false,
      origin: "foreground",
      chain: Promise.resolve(),
      done: Promise.resolve(null as never),
      lastTail: "",
      lastTailMs: 0,
      persisted: false,
      ended: false,
    };
    this.#running.set(launch.id, entry);
    // Persisting and ending are steps of one chain, run in the order they
    // were asked for: a reply that gave up waiting just as the run ended
    // still gets a job that says `ended`, never one stuck at `running`.
    const ended = launch.result.then((result) => {
      const step = entry.chain.then(() => this.#end(entry, result));
      entry.chain = step.then(() => {}, () => {});
      return step;
    });
    entry.done = this.#context.track(
      ended.finally(() => {
        launch.release();
        this.#running.delete(launch.id);
        this.#stopTickerWhenIdle();
      }),
    );
    return {
      done: entry.done,
      persist: (origin) => {
        entry.durable = true;
        entry.origin = origin;
        const step = entry.chain.then(() => entry.ended ? undefined : this.#persist(entry));
        entry.chain = step.catch(() => {});
        return step;
      },
    };
  }

  async #persist(entry: Entry): Promise<void> {
    const { launch } = entry;
    entry.persisted = true;
    // The heartbeat first: another server sweeping between the two writes
    // must find this server alive, or it would call the new job lost.
    await this.store.beat(this.writer);
    await this.store.put(this.#record(entry, null));
    await this.#context.audit.writeEvent("job_started", {
      job_id: launch.id,
      call_id: launch.callId,
      client_id: launch.clientId,
      origin: entry.origin,
      timeout_ms: launch.timeoutMs,
    });
    this.#startTicker();
  }

  async #end(
    entry: Entry,
    result: CommandResult,
  ): Promise<{ result: CommandResult; kept: boolean }> {
    entry.ended = true;
    // Asked to be a job after the run had ended: it starts and ends here.
    if (entry.durable && !entry.persisted) await this.#persist(entry);
    const { limits } = this.#context.policy;
    const long = (text: string) =>
      new TextEncoder().encode(text).byteLength > limits.inlineOutputBytes;
    // A foreground call keeps a record only when its reply will be cut:
    // then the whole redacted output stays readable with job_output.
    const keep = entry.durable || long(result.stdout) || long(result.stderr);
    if (!keep) return { result, kept: false };
    try {
      await this.store.putOutput(entry.launch.id, {
        stdout: capStored(result.stdout, limits.jobOutputBytes),
        stderr: capStored(result.stderr, limits.jobOutputBytes),
      });
      const ended = this.#record(entry, result);
      // A durable job keeps what others wrote into its record (a cancel request).
      const merged = entry.durable
        ? await this.store.update(
          ended.owner,
          ended.id,
          (r) => ({ ...ended, cancelRequestedMs: r.cancelRequestedMs }),
        )
        : null;
      if (merged === null) await this.store.put(ended);
    } catch (error) {
      await this.#context.audit.writeEvent("internal_error", {
        call_id: entry.launch.callId,
        where: "job record",
        message: error instanceof Error ? error.message : String(error),
      });
      if (!entry.durable) return { result, kept: false };
    }
    if (entry.durable) {
      await this.#context.audit.writeEvent("job_ended", {
        job_id: entry.launch.id,
        call_id: entry.launch.callId,
        client_id: entry.launch.clientId,
        result_code: result.code,
        exit_code: result.exit_code,
        reason: result.policy_reason,
      });
    }
    return { result, kept: true };
  }

  #record(entry: Entry, result: CommandResult | null): JobRecord {
    const { launch } = entry;
    const redact = this.#context.redactor.redact;
    return {
      id: launch.id,
      owner: launch.owner,
      callId: launch.callId,
      command: redact(launch.command),
      argv: launch.argv.map(redact),
      cwd: launch.cwd,
      origin: entry.origin,
      state: result === null ? "running" : "ended",
      code: result?.code ?? null,
      exitCode: result?.exit_code ?? null,
      reason: result === null ? "The command is running." : result.policy_reason,
      startedMs: launch.startedMs,
      endedMs: result === null ? null : Date.now(),
      timeoutMs: launch.timeoutMs,
      stdoutBytes: launch.live.bytes("stdout"),
      stderrBytes: launch.live.bytes("stderr"),
      truncated: result !== null && result.code === "OUTPUT_TRUNCATED",
      writer: this.writer,
      pid: Deno.pid,
      cancelRequestedMs: null,
      tail: entry.lastTail,
      ...(launch.approvalId === undefined ? {} : { approvalId: launch.approvalId }),
    };
  }

  /**
   * Cancels the owner's job: here, through its controller; on another
   * server, by a cancel request in its record, which that server obeys at
   * its next tick. Waits (bounded) until the end is recorded.
   *
   * @param owner The caller's owner key; another owner's job is answered as absent.
   * @param clientId The OAuth client id for the audit record, or null.
   * @param id The job's id.
   * @returns The record afterwards (still live when the end took longer
   *   than `CANCEL_WAIT_MS`), or null when the owner has no such job.
   */
  async cancel(owner: string, clientId: string | null, id: string): Promise<JobRecord | null> {
    const held = this.#held.get(id);
    if (held !== undefined && held.owner === owner) {
      await this.#context.audit.writeEvent("job_cancel_requested", {
        job_id: id,
        client_id: clientId,
        via: "this_server",
      });
      held.cancel();
      await Promise.race([held.done, delay(CANCEL_WAIT_MS)]);
      // The approval came just before the cancel and the run started: the
      // cancel still stands, now against the running tree.
      const started = this.#running.get(id);
      if (started !== undefined && started.durable) {
        started.launch.controller.abort(new Error("job_cancel"));
        await Promise.race([started.done, delay(CANCEL_WAIT_MS)]);
      }
      return await this.store.get(owner, id);
    }
    const local = this.#running.get(id);
    if (local !== undefined && local.durable && local.launch.owner === owner) {
      await this.#context.audit.writeEvent("job_cancel_requested", {
        job_id: id,
        client_id: clientId,
        via: "this_server",
      });
      local.launch.controller.abort(new Error("job_cancel"));
      await Promise.race([local.done, delay(CANCEL_WAIT_MS)]);
      return await this.store.get(owner, id);
    }
    let requested = false;
    const record = await this.store.update(owner, id, (r) => {
      if (!isLiveState(r.state)) return null;
      requested = true;
      return { ...r, cancelRequestedMs: r.cancelRequestedMs ?? Date.now() };
    });
    if (record === null || !requested) return record;
    await this.#context.audit.writeEvent("job_cancel_requested", {
      job_id: id,
      client_id: clientId,
      via: "state_dir",
    });
    return await this.waitForEnd(owner, id, CANCEL_WAIT_MS);
  }

  /**
   * The owner's job once it is no longer running, or as it is after `waitMs`.
   * A job of another server is polled (sweeping, so a dead server's job
   * turns `lost` rather than keeping the wait to its end).
   *
   * @returns The record, or null when the owner has no such job.
   */
  async waitForEnd(owner: string, id: string, waitMs: number): Promise<JobRecord | null> {
    const deadline = Date.now() + waitMs;
    // A job held for its approval may start here and then run: the wait
    // goes on through both, within the one bound.
    const held = this.#held.get(id);
    if (held !== undefined && held.owner === owner) {
      await Promise.race([held.done, delay(waitMs)]);
      if (Date.now() >= deadline) return await this.store.get(owner, id);
      waitMs = deadline - Date.now();
    }
    const local = this.#running.get(id);
    if (local !== undefined && local.durable && local.launch.owner === owner) {
      await Promise.race([local.done, delay(waitMs)]);
      return await this.store.get(owner, id);
    }
    while (true) {
      await this.sweep();
      const record = await this.store.get(owner, id);
      if (record === null || !isLiveState(record.state) || Date.now() >= deadline) return record;
      await delay(Math.min(POLL_MS, deadline - Date.now()));
    }
  }

  /** Marks lost jobs and deletes expired ones (of every owner), auditing each. */
  async sweep(): Promise<void> {
    const report = await this.store.sweep(
      this.writer,
      (id) => this.isRunningHere(id),
      this.#context.policy.limits.jobRetentionMs,
    );
    for (const job of report.lost) {
      await this.#context.audit.writeEvent("job_lost", {
        job_id: job.id,
        call_id: job.callId,
        server_pid: job.pid,
      });
    }
    for (const job of report.expired) {
      await this.#context.audit.writeEvent("job_expired", { job_id: job.id, call_id: job.callId });
    }
  }

  #startTicker(): void {
    if (this.#ticker !== undefined) return;
    let busy = false;
    // The ticker alone must not keep a stopping server alive.
    this.#ticker = every(HEARTBEAT_MS, () => {
      if (busy) return;
      busy = true;
      this.#tick().catch(() => {}).finally(() => busy = false);
    }, { keepAlive: false });
  }

  #stopTickerWhenIdle(): void {
    if (this.#held.size > 0 || [...this.#running.values()].some((e) => e.durable)) return;
    this.#ticker?.cancel();
    this.#ticker = undefined;
  }

  /** Heartbeat, cancel requests from other servers, and the stored tail. */
  async #tick(): Promise<void> {
    await this.store.beat(this.writer);
    const now = Date.now();
    const interval = this.#context.policy.limits.progressIntervalMs;
    for (const [id, held] of this.#held) {
      const record = await this.store.get(held.owner, id);
      if (record?.cancelRequestedMs !== null && record?.cancelRequestedMs !== undefined) {
        held.cancel();
      }
    }
    for (const entry of this.#running.values()) {
      if (!entry.durable) continue;
      const { launch } = entry;
      const record = await this.store.get(launch.owner, launch.id);
      if (record === null || record.state !== "running") continue;
      if (record.cancelRequestedMs !== null) {
        launch.controller.abort(new Error("job_cancel"));
        continue;
      }
      if (now - entry.lastTailMs < interval) continue;
      entry.lastTailMs = now;
      const tail = launch.live.message(now - launch.startedMs, this.#context.redactor);
      if (tail === entry.lastTail) continue;
      entry.lastTail = tail;
      await this.store.update(launch.owner, launch.id, (r) =>
        r.state === "running"
          ? {
            ...r,
            tail,
            stdoutBytes: launch.live.bytes("stdout"),
            stderrBytes: launch.live.bytes("stderr"),
          }
          : null);
    }
  }
}

/** A wait that does not keep a stopping server alive. */
function delay(ms: number): Promise<void> {
  return sleep(ms, { keepAlive: false });
}

const managers = new WeakMap<JobContext, JobManager | null>();

/**
 * The job manager of `context` (one per server process), or null when the
 * policy has no state store (no `state_dir`, no `[state] backend`): jobs
 * are durable or absent.
 *
 * @param context The server context; the same one always gets the same manager.
 * @returns The manager, or null when the policy keeps no state.
 * @throws Error when the policy's PostgreSQL store was never opened (a wiring bug).
 *
 * @example
 * ```ts
 * import { jobsFor, type JobContext } from "./mod.ts";
 * declare const context: JobContext;
 * const jobs = jobsFor(context);
 * if (jobs === null) console.log("no state_dir: runs cannot become jobs");
 * else console.log(await jobs.store.list("local")); // the caller's jobs, newest first
 * ```
 */
export function jobsFor(context: JobContext): JobManager | null {
  let manager = managers.get(context);
  if (manager === undefined) {
    const store = stateStoreFor(context.policy);
    manager = store === null ? null : new JobManager(context, new JobStore(store));
    managers.set(context, manager);
  }
  return manager;
}
