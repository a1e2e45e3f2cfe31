/**
 * Job records in the state directory, shared by every server using it
 * (through `RecordStore`: owner-only files, atomic replace, a cross-process
 * lock around every read-check-write).
 *
 * Threats and answers:
 * - Reading or cancelling another caller's job: every lookup takes the
 *   owner and answers a record of another owner exactly like a missing one.
 * - A job shown as running forever after its server crashed: each server
 *   that runs jobs writes a heartbeat record; a running job whose server's
 *   heartbeat is missing or older than `LOST_AFTER_MS` is turned `lost`
 *   (and audited by the caller) the next time anyone looks.
 * - Output piling up: records and output are deleted `job_retention_s`
 *   after the job ended, when anyone next looks at the jobs.
 *
 * @module
 */
import { isRecordName, type StateStore } from "../state/mod.ts";
import {
  isJobOutput,
  isJobRecord,
  isLiveState,
  type JobOutput,
  type JobRecord,
} from "./records.ts";

const JOBS = "jobs";
const OUTPUT = "job_output";
const SERVERS = "job_servers";

/** How often a server running jobs renews its heartbeat. */
export const HEARTBEAT_MS = 1_000;
/** A running job whose server has not beaten for this long is lost. */
export const LOST_AFTER_MS = 5_000;

interface Heartbeat {
  readonly writer: string;
  readonly pid: number;
  readonly beatMs: number;
}

function isHeartbeat(value: unknown): value is Heartbeat {
  if (value === null || typeof value !== "object") return false;
  const r = value as Record<string, unknown>;
  return typeof r.writer === "string" && Number.isSafeInteger(r.pid) &&
    Number.isSafeInteger(r.beatMs);
}

/** What a sweep changed, for the audit log. */
export interface SweepReport {
  /** Jobs turned `lost` by this sweep, as now stored. */
  readonly lost: readonly JobRecord[];
  /** Ended jobs deleted by this sweep (with their output), as they were. */
  readonly expired: readonly JobRecord[];
}

/**
 * The job records, their output and the servers' heartbeats in a state
 * store. Every lookup takes the owner, so one caller's job is invisible to
 * another; every read-check-write runs under the store's lock, so servers
 * sharing it never lose each other's changes.
 *
 * @example
 * ```ts
 * import { JobStore } from "./mod.ts";
 * import { LocalStateStore } from "../state/mod.ts";
 * const state = new LocalStateStore(await Deno.makeTempDir());
 * const jobs = new JobStore(state);
 * console.log(await jobs.list("local")); // [] : nothing ran yet
 * console.log(await jobs.get("client:other", "job_abc")); // null, absent and foreign alike
 * await state.close();
 * ```
 */
export class JobStore {
  readonly #store: StateStore;
  readonly #now: () => number;

  /**
   * A job store over `store`.
   *
   * @param store The policy's state store: the state dir's files, or the
   *   fleet's PostgreSQL database, so every replica sees the same jobs.
   * @param now The clock heartbeats and sweeps read (a test's fake clock).
   */
  constructor(store: StateStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /** The owner's job, or null when absent, foreign or malformed. */
  async get(owner: string, id: string): Promise<JobRecord | null> {
    if (!isRecordName(id)) return null;
    const record = await this.#store.read(JOBS, id);
    if (!isJobRecord(record) || record.id !== id || record.owner !== owner) return null;
    return record;
  }

  /** Writes a new or replaced record under the lock. */
  put(record: JobRecord): Promise<void> {
    return this.#store.withLock(JOBS, () => this.#store.write(JOBS, record.id, record));
  }

  /**
   * Changes the owner's record under the lock; `change` returns the new
   * record, or null to leave it. Resolves with what is stored afterwards.
   */
  update(
    owner: string,
    id: string,
    change: (record: JobRecord) => JobRecord | null,
  ): Promise<JobRecord | null> {
    return this.#store.withLock(JOBS, async () => {
      const record = await this.get(owner, id);
      if (record === null) return null;
      const next = change(record);
      if (next === null) return record;
      await this.#store.write(JOBS, id, next);
      return next;
    });
  }

  /** The output of the owner's job; null when there is none (yet). */
  async output(owner: string, id: string): Promise<JobOutput | null> {
    if ((await this.get(owner, id)) === null) return null;
    const output = await this.#store.read(OUTPUT, id);
    return isJobOutput(output) ? output : null;
  }

  /** Stores a job's redacted output (written before its record says it ended). */
  putOutput(id: string, output: JobOutput): Promise<void> {
    return this.#store.write(OUTPUT, id, output);
  }

  /** Every job of `owner`, newest first. */
  async list(owner: string): Promise<JobRecord[]> {
    const found: JobRecord[] = [];
    for (const id of await this.#store.list(JOBS)) {
      const record = await this.get(owner, id);
      if (record !== null) found.push(record);
    }
    return found.sort((a, b) => b.startedMs - a.startedMs);
  }

  /** Renews this server's heartbeat. */
  beat(writer: string): Promise<void> {
    return this.#store.write(
      SERVERS,
      writer,
      {
        writer,
        pid: Deno.pid,
        beatMs: this.#now(),
      } satisfies Heartbeat,
    );
  }

  /** Removes this server's heartbeat (it stops; its jobs were recorded ended). */
  forget(writer: string): Promise<void> {
    return this.#store.remove(SERVERS, writer);
  }

  /**
   * Marks lost every running job (of any owner) whose server is gone, and
   * deletes every job that ended more than `retentionMs` ago, with its
   * output. `self` is this server's writer id: its own running jobs are
   * alive by definition (`isRunningHere` says which are).
   *
   * @returns What changed, for the caller to audit.
   */
  sweep(
    self: string,
    isRunningHere: (id: string) => boolean,
    retentionMs: number,
  ): Promise<SweepReport> {
    return this.#store.withLock(JOBS, async () => {
      const now = this.#now();
      const lost: JobRecord[] = [];
      const expired: JobRecord[] = [];
      const alive = new Map<string, boolean>();
      for (const id of await this.#store.list(JOBS)) {
        const record = await this.#store.read(JOBS, id);
        if (!isJobRecord(record) || record.id !== id) continue;
        // A job waiting for its approval is watched by its server as a
        // running one is run by it: with the server gone, nobody would start it.
        if (isLiveState(record.state)) {
          const live = record.writer === self
            ? isRunningHere(id)
            : alive.get(record.writer) ?? await this.#serverAlive(record.writer, now);
          if (record.writer !== self) alive.set(record.writer, live);
          if (live) continue;
          const gone: JobRecord = {
            ...record,
            state: "lost",
            endedMs: now,
            reason: record.state === "awaiting_approval"
              ? `The server that held this job for its approval (pid ${record.pid}) stopped without recording its end; nothing ran.`
              : `The server that ran this job (pid ${record.pid}) stopped without recording its end; its process tree died with it.`,
          };
          await this.#store.write(JOBS, id, gone);
          lost.push(gone);
        } else if (record.endedMs !== null && now - record.endedMs > retentionMs) {
          await this.#store.remove(OUTPUT, id);
          await this.#store.remove(JOBS, id);
          expired.push(record);
        }
      }
      // Heartbeats of servers long gone: nothing refers to them any more.
      for (const writer of await this.#store.list(SERVERS)) {
        const beat = await this.#store.read(SERVERS, writer);
        if (writer === self) continue;
        if (!isHeartbeat(beat) || now - beat.beatMs > retentionMs + LOST_AFTER_MS) {
          await this.#store.remove(SERVERS, writer);
        }
      }
      return { lost, expired };
    });
  }

  async #serverAlive(writer: string, now: number): Promise<boolean> {
    if (!isRecordName(writer)) return false;
    const beat = await this.#store.read(SERVERS, writer);
    return isHeartbeat(beat) && now - beat.beatMs <= LOST_AFTER_MS;
  }
}
