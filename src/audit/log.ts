/**
 * The append-only, hash-chained audit log writer.
 *
 * Threat answered: an operator must be able to say afterwards what the model
 * tried and what ran, even if the server was killed mid-command, and an edit
 * or deletion of past records must be detectable. So every record is on disk
 * (written, then `fdatasync`) before its write resolves; the caller starts a
 * command only after its `attempt` resolved `ok`, and in fail-closed mode
 * refuses the call (`AUDIT_UNAVAILABLE`) when it did not.
 *
 * Writes from overlapping calls go through one queue: one writer at a time
 * assigns `seq` and `prev`, so the chain stays linear and lines never
 * interleave. Records queued while a flush is in progress are written together
 * in one `write` of complete lines and one `fdatasync` (group commit); each
 * still resolves only after that flush. An `outcome` alone is the exception:
 * answered once written, its `fdatasync` is left to the next append (whose
 * own `fdatasync` covers the file's every byte) or to a short timer, so a
 * call's attempt never queues behind the previous call's outcome on the disk.
 *
 * Deny on failure: any error while writing marks the chain position unknown;
 * the next write re-reads the file's tail first, so a record that reached the
 * disk despite an error (a failed `fdatasync`) is chained to, and bytes a
 * failed write left behind are closed off by a `chain_reset` record.
 *
 * @module
 */

import { basename, dirname } from "../path/mod.ts";
import type { AuditRotation } from "../config/types.ts";
import type {
  AttemptFields,
  AuditEventFields,
  AuditEventName,
  AuditFailMode,
  AuditWriteResult,
  ExplainFields,
  OutcomeFields,
} from "./records.ts";
import {
  buildAttempt,
  buildEvent,
  buildExplain,
  buildOutcome,
  type RecordBody,
  type Redact,
  type RedactArgv,
} from "./build.ts";
import { after, sleep, type Timer } from "../timers/mod.ts";
import { buildRecordsDropped, buildSegment } from "./build.ts";
import { linkBatch } from "./chain.ts";
import { type ChainHead, examineLog } from "./examine.ts";
import { type LogFile, openLogFile } from "./open_file.ts";
import { GENESIS_HASH, type SegmentFields, type SegmentFinding } from "./records.ts";
import { type ChainTail, readChainTail, readFirstRecord } from "./tail.ts";
import { type CheckpointSettings, CheckpointWriter } from "./checkpoint_writer.ts";

/** Options of `AuditLog.open`. */
export interface AuditLogOptions {
  /**
   * Applied by the log to `command_raw`, `argv`, `cwd`, `reason` and event
   * strings before they are written. Required, so no call site can forget it;
   * pass `(s) => s` only when redaction is switched off in the policy.
   */
  readonly redact: Redact;
  /**
   * Redacts a whole argv (so `--password VALUE` hides VALUE); default: each
   * word through `redact`.
   */
  readonly redactArgv?: RedactArgv;
  /** Receives each warning line; default: one line on stderr. */
  readonly warn?: (line: string) => void;
  /** Built-in rotation (`[audit] rotate_bytes`, `rotate_daily`); default off. */
  readonly rotation?: AuditRotation;
  /**
   * The identity (`policyHash`) of the policy that judges the calls this
   * log records, stamped on every record it writes (`policy_hash`), so a
   * reader can say which policy allowed or refused each line. Absent for a
   * writer with no policy of its own (tests, tools).
   */
  readonly policyHash?: string;
  /**
   * Signed checkpoints of the chain head (`[audit] checkpoint_every`):
   * written under the append lock every N records, at rotation and at
   * `close()`. Absent: none.
   */
  readonly checkpoints?: CheckpointSettings;
  /**
   * The client's `traceparent` of the tool call in progress, if any; an
   * attempt record written without one of its own takes it. Default: none.
   */
  readonly traceparent?: () => string | null;
}

/** `ok` with the log, or the sentence saying why it could not be opened. */
export type AuditOpenResult =
  | { readonly ok: true; readonly log: AuditLog }
  | { readonly ok: false; readonly reason: string };

type Refused = { readonly ok: false; readonly reason: string };
type Opened = { readonly ok: true } | Refused;

interface Pending {
  /** null for a check without a record of the caller's (`reopen`). */
  readonly body: RecordBody | null;
  readonly resolve: (result: AuditWriteResult) => void;
  /**
   * Resolved once the record is written, before its fdatasync (see
   * `writeOutcome`); every other record resolves only once it is durable.
   */
  readonly early: boolean;
  /** The deferred-sync timer's marker: make the written records durable, write nothing. */
  readonly sync: boolean;
}

interface Dropped {
  count: number;
  readonly firstTs: string;
  lastTs: string;
  reason: string;
}

/**
 * What closed mode does not continue on its own: the records the writer had
 * written are gone from the path, which is the operator's call (SIGHUP), not
 * the writer's. Rotation (`path_missing`, `new_empty_file`) is followed.
 */
const HALTING_FINDINGS: ReadonlyMap<string, string> = new Map([
  ["file_replaced", "replaced by another file"],
  ["file_truncated", "truncated"],
  ["file_removed", "removed"],
]);

/** Upper bound on records flushed together, so one flush stays short. */
const MAX_BATCH = 256;

/**
 * How long an outcome written alone may wait for its `fdatasync`. Within it
 * the next call's attempt (a client calling in turn sends it well under a
 * millisecond after the answer; calls in flight send them all the time)
 * carries the outcome to disk with its own `fdatasync`, which the attempt
 * needs anyway; the timer covers a server that goes quiet. It bounds what a
 * machine crash (not a killed process: the bytes are in the page cache) can
 * lose: the outcomes of the last 20 ms, never an attempt.
 */
const OUTCOME_SYNC_DELAY_MS = 20;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Synchronous on purpose: an append to a local file copies into the page
 * cache and does not wait on the disk (the fdatasync that follows does, and
 * stays asynchronous); through the runtime's thread pool the write costs a
 * round trip per record.
 */
function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) {
    const n = file.writeSync(bytes.subarray(written));
    if (n <= 0) throw new Error(`write returned ${n}`);
    written += n;
  }
}

/**
 * How long an append waits for another writer's lock. A writer holds it for
 * one append only (milliseconds), so a longer hold means a stuck or stopped
 * process (SIGSTOP, a hung disk): the call is then refused or runs unaudited
 * per the fail mode, instead of hanging every call of this server.
 */
const LOCK_WAIT_MS = 10_000;

/**
 * Takes the exclusive lock, polling `tryLock` with a growing pause, never a
 * blocking `lock()`: a blocking call abandoned at a deadline would take the
 * lock later and hold it forever. The non-blocking `flock` is called
 * synchronously: it never waits, and a trip through the runtime's thread
 * pool costs ten times the system call on every append.
 */
async function acquire(folder: Deno.FsFile): Promise<boolean> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let pause = 0.5;
  while (!folder.tryLockSync(true)) {
    if (Date.now() > deadline) return false;
    await sleep(pause);
    pause = Math.min(pause * 2, 8);
  }
  return true;
}

function newWriterId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A tail that makes the next record continue `head` in a file that is still empty. */
function continuing(head: ChainHead): ChainTail {
  return { lastSeq: head.seq, lastHash: head.hash, damage: null, size: 0 };
}

/** An open audit log. Create with `AuditLog.open`. */
export class AuditLog {
  /** The log's path as configured. */
  readonly path: string;
  /** `closed`: callers refuse a call whose attempt was not written. `open`: they run it anyway. */
  readonly failMode: AuditFailMode;
  /** Random id stamped on every record this log writes (`writer`). */
  readonly writer: string;
  /** The policy identity stamped on every record; null when the log was opened without one. */
  readonly policyHash: string | null;
  readonly #redact: Redact;
  readonly #redactArgv: RedactArgv | undefined;
  readonly #warn: (line: string) => void;
  readonly #traceparent: () => string | null;
  readonly #rotation: AuditRotation | null;
  readonly #checkpoints: CheckpointWriter | null;
  /** UTC day (YYYY-MM-DD) of the current file's first record, for `rotate_daily`. */
  #fileDay: string | null = null;
  /** The log's folder, held open as the cross-process append lock. */
  #folder: Deno.FsFile | null = null;
  #current: LogFile | null = null;
  /** Where the chain stands; null when unknown (never read, or after a failed write). */
  #tail: ChainTail | null = null;
  /** The largest size `#current` was seen at: a smaller file was truncated. */
  #knownEnd = 0;
  /** The last head written or read in `#current`, named by the next `segment` record. */
  #knownHead: ChainHead = { seq: 0, hash: GENESIS_HASH };
  /** A `segment` record owed to the current file (its write failed so far). */
  #pendingSegment: SegmentFields | null = null;
  /** `seq` of the first record an append wrote into a file truncated under it; null when none. */
  #displacedSeq: number | null = null;
  /** Why writes stop until `reopen()` (closed mode, after tampering was found). */
  #halted: string | null = null;
  /**
   * `reopen()` calls (SIGHUPs) so far, and how many of them a finished check
   * has used: the operator accepts a replaced or truncated file while
   * `#acks > #acksUsed`. Counted, not a flag: a SIGHUP that arrives while an
   * append is between its check and its end must survive that append (which
   * checked before the file was cut) for the next check, which sees the cut.
   * A flag cleared at the end of every append lost it, and closed mode then
   * refused every call until another SIGHUP that logrotate never sends.
   */
  #acks = 0;
  #acksUsed = 0;
  /** Records lost in open mode, reported by a `records_dropped` record once writes work. */
  #dropped: Dropped | null = null;
  #queue: Pending[] = [];
  /** True while `#drain` runs; set and cleared synchronously, so no queued entry is stranded. */
  #draining = false;
  #drained: Promise<void> = Promise.resolve();
  #closed = false;
  /** The file holding written records not yet `fdatasync`ed (deferred outcomes); null when none. */
  #unsynced: Deno.FsFile | null = null;
  /** The pending deferred-sync timer, if any. */
  #syncTimer: Timer | null = null;

  private constructor(path: string, failMode: AuditFailMode, options: AuditLogOptions) {
    this.path = path;
    this.failMode = failMode;
    this.writer = newWriterId();
    this.policyHash = options.policyHash ?? null;
    this.#redact = options.redact;
    this.#redactArgv = options.redactArgv;
    this.#warn = options.warn ?? ((line) => console.error(line));
    this.#traceparent = options.traceparent ?? (() => null);
    const rotation = options.rotation;
    this.#rotation = rotation !== undefined && (rotation.bytes !== null || rotation.daily)
      ? rotation
      : null;
    this.#checkpoints = options.checkpoints === undefined
      ? null
      : new CheckpointWriter(options.checkpoints, this.#warn);
  }

  /**
   * Opens (creating with mode 0600 if missing, never through a symlink) the
   * log at `path` for appending and continues the chain from its last
   * complete record. The parent folder must exist: htmcp never creates
   * folders for its log, so a mistyped path fails loudly instead of logging
   * somewhere unexpected.
   *
   * Several processes may write one log: each append takes an exclusive
   * `flock` on the log's folder, re-reads the chain head from the file's tail,
   * appends and `fdatasync`s before releasing it, so all writers form one
   * chain. Under that lock the writer also checks that the path still names
   * its open file (see `examine.ts`): a rotated log is followed to its new
   * file, whose first record (`segment`) names the previous file's last hash.
   *
   * In `closed` mode any failure is returned as `{ ok: false }` and the server
   * must not start. In `open` mode a failure prints a warning and returns a log
   * whose writes retry the open and report `{ ok: false }` until it succeeds.
   *
   * @param path absolute path of the log file
   * @param failMode `audit_fail_mode`
   * @param options the redaction function (required) and a warning sink
   * @returns the log, or why it could not be opened
   * @throws {TypeError} on a bad `failMode` or missing `redact`
   * @example
   * ```ts
   * import { type AttemptFields, AuditLog } from "./mod.ts";
   * declare const fields: AttemptFields;
   * declare function refuse(code: "AUDIT_UNAVAILABLE"): never;
   * const redact = (text: string) => text; // the policy's redactor
   * const opened = await AuditLog.open("/var/log/htmcp/audit.jsonl", "closed", { redact });
   * if (!opened.ok) throw new Error(opened.reason);
   * const written = await opened.log.writeAttempt(fields);
   * if (!written.ok && opened.log.failMode === "closed") refuse("AUDIT_UNAVAILABLE");
   * ```
   */
  static async open(
    path: string,
    failMode: AuditFailMode,
    options: AuditLogOptions,
  ): Promise<AuditOpenResult> {
    if (failMode !== "closed" && failMode !== "open") {
      throw new TypeError(`Audit fail mode must be "closed" or "open", not "${failMode}".`);
    }
    if (typeof options?.redact !== "function") {
      throw new TypeError("AuditLog.open needs a redact function.");
    }
    const log = new AuditLog(path, failMode, options);
    const opened = await log.#locked(() => log.#openFirst());
    if (!opened.ok) {
      if (failMode === "closed") return { ok: false, reason: opened.reason };
      log.#warn(
        `htmcp: warning: ${opened.reason} Commands run unaudited because audit_fail_mode is "open"; every write retries.`,
      );
    }
    return { ok: true, log };
  }

  /** Records a call about to run (or refused by policy or jail). Resolves after fdatasync. */
  writeAttempt(fields: AttemptFields): Promise<AuditWriteResult> {
    const traceparent = fields.traceparent ?? this.#traceparent();
    const traced = traceparent === null ? fields : { ...fields, traceparent };
    return this.#enqueue(buildAttempt(traced, this.#redact, this.#redactArgv));
  }

  /**
   * Records how a call ended: codes and byte counts, never output. Resolves
   * once the record is in the file (readable by every reader, chained) and
   * before its fdatasync, which is the next append's (covering the whole
   * file), or the timer's (`OUTCOME_SYNC_DELAY_MS`), or `close()`'s: neither
   * the reply to the client nor the next call's attempt waits for the disk.
   * Why that is safe: the record that guards the boundary is the attempt,
   * durable before anything runs; an outcome says how a call that was
   * recorded ended, and a machine crash in the window loses at most
   * outcomes, leaving attempts without one, exactly as a crash during the
   * run does. The next append (this writer's or another's) waits for the
   * lock, so records stay in chain order.
   */
  writeOutcome(fields: OutcomeFields): Promise<AuditWriteResult> {
    return this.#enqueue(buildOutcome(fields), true);
  }

  /** Records an `explain_command` call and its verdict. */
  writeExplain(fields: ExplainFields): Promise<AuditWriteResult> {
    return this.#enqueue(buildExplain(fields, this.#redact, this.#redactArgv));
  }

  /**
   * Records an event of another subsystem.
   *
   * @param event The event's name.
   * @param fields Its fields.
   * @param wait `"synced"` (the default): resolves after fdatasync.
   *   `"written"`: resolves once the record is in the file, chained, its
   *   fdatasync left to the next append, the timer or `close()`, as an
   *   outcome's: for an event that guards nothing, such as the server's start
   *   (the first attempt's fdatasync, before anything runs, covers it).
   * @throws {TypeError} when a field is reserved, names content or a credential, or is nested
   */
  writeEvent<K extends AuditEventName>(
    event: K,
    fields: AuditEventFields[K],
    wait: "synced" | "written" = "synced",
  ): Promise<AuditWriteResult> {
    return this.#enqueue(buildEvent(event, fields, this.#redact), wait === "written");
  }

  /**
   * What SIGHUP does: checks the path at once (a rotated log is left for the
   * new file now, not at the next call) and accepts what is found there. A
   * replaced or truncated log that stopped writes in closed mode is taken up
   * again, its first new record (`segment`) saying what was found.
   *
   * @returns `ok` with the chain's last `seq` once the check (and any
   *   `segment` record) is done, or why the log is still not writable
   */
  reopen(): Promise<AuditWriteResult> {
    this.#acks++;
    this.#halted = null;
    return this.#enqueue(null);
  }

  /** Waits for queued writes, then closes the file. Later writes report `{ ok: false }`. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#syncTimer?.cancel();
    this.#syncTimer = null;
    await this.#drained;
    await this.#syncDeferred();
    if (this.#checkpoints !== null && this.#halted === null && this.#current !== null) {
      await this.#locked(() => this.#shutdownCheckpoint());
    }
    this.#current?.file.close();
    this.#current = null;
    this.#folder?.close();
    this.#folder = null;
  }

  #enqueue(body: RecordBody | null, early = false): Promise<AuditWriteResult> {
    if (this.#closed) {
      return Promise.resolve(this.#fail(`The audit log "${this.path}" is closed.`, body !== null));
    }
    const written = new Promise<AuditWriteResult>((resolve) =>
      this.#queue.push({ body, resolve, early, sync: false })
    );
    this.#startDrain();
    return written;
  }

  #startDrain(): void {
    if (!this.#draining) {
      this.#draining = true;
      this.#drained = this.#drain();
    }
  }

  /** Arms the timer that makes deferred outcomes durable if no append does first. */
  #armSyncTimer(): void {
    if (this.#syncTimer !== null || this.#closed) return;
    // A quiet server may exit with the timer pending: the records are in the
    // file already, and close() syncs them.
    this.#syncTimer = after(OUTCOME_SYNC_DELAY_MS, () => {
      this.#syncTimer = null;
      if (this.#unsynced === null || this.#closed) return;
      this.#queue.push({ body: null, resolve: () => {}, early: false, sync: true });
      this.#startDrain();
    }, { keepAlive: false });
  }

  /**
   * `fdatasync` of the file holding deferred outcomes. Serialized with
   * appends (called from the drain, or once it is idle), and needs no lock:
   * it writes nothing. A failure is the next append's to find, as with any
   * failed `fdatasync`: the chain tail is re-read.
   */
  async #syncDeferred(): Promise<void> {
    const file = this.#unsynced;
    if (file === null) return;
    this.#unsynced = null;
    try {
      await file.syncData();
    } catch (error) {
      this.#tail = null;
      this.#warnSyncFailed(error);
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const taken = this.#queue.splice(0, MAX_BATCH);
        const batch = taken.filter((entry) => !entry.sync);
        if (batch.length === 0) {
          await this.#syncDeferred();
          continue;
        }
        // Outcomes alone leave their fdatasync to the next append (see
        // OUTCOME_SYNC_DELAY_MS); anything else, or the timer's marker, syncs now.
        const defer = batch.length === taken.length && batch.every((entry) => entry.early);
        const bodies = batch.flatMap((entry) => entry.body === null ? [] : [entry.body]);
        // Set once the early entries were answered (their records written).
        let answeredEarly = false;
        const written = (seqs: readonly number[]) => {
          answeredEarly = true;
          let next = 0;
          for (const entry of batch) {
            if (entry.body === null) continue;
            const seq = seqs[next++]!;
            if (entry.early) entry.resolve({ ok: true, seq });
          }
        };
        let outcome: Committed;
        try {
          outcome = await this.#locked(() => this.#commit(bodies, written, defer));
        } catch (error) {
          // Not expected; still, a caller must never wait forever nor run unaudited.
          this.#tail = null;
          outcome = {
            ok: false,
            reason: `Cannot write the audit log "${this.path}": ${messageOf(error)}`,
          };
        }
        let next = 0;
        for (const entry of batch) {
          const isRecord = entry.body !== null;
          if (entry.early && answeredEarly) {
            // Answered when written: a failed fdatasync afterwards is the
            // next append's to find (the chain tail is re-read), and the
            // record is in the file, so it is not counted as dropped.
            if (isRecord) next++;
            continue;
          }
          if (!outcome.ok) entry.resolve(this.#fail(outcome.reason, isRecord));
          else if (isRecord) entry.resolve({ ok: true, seq: outcome.seqs[next++]! });
          else entry.resolve({ ok: true, seq: outcome.lastSeq });
        }
      }
    } finally {
      // Cleared in the same synchronous step as the empty-queue check above, so
      // an entry queued after it starts a new drain instead of being stranded.
      this.#draining = false;
    }
  }

  /** Runs `step` holding the cross-process append lock on the log's folder. */
  async #locked<T extends Opened>(step: () => Promise<T>): Promise<T | Refused> {
    if (this.#folder === null) {
      try {
        // Read-only: the folder is locked, never written. A folder, not a
        // sidecar file, because it survives every rotation of the log and
        // needs no write grant beyond the log file itself.
        this.#folder = await Deno.open(dirname(this.path), { read: true });
      } catch (error) {
        return {
          ok: false,
          reason: `Cannot open the audit log "${this.path}": ${messageOf(error)}.`,
        };
      }
    }
    const folder = this.#folder;
    let locked: boolean;
    try {
      locked = await acquire(folder);
    } catch (error) {
      return {
        ok: false,
        reason: `Cannot lock the audit log's folder "${dirname(this.path)}": ${messageOf(error)}.`,
      };
    }
    if (!locked) {
      return {
        ok: false,
        reason: `Cannot lock the audit log's folder "${
          dirname(this.path)
        }": another writer has held its lock for over ${LOCK_WAIT_MS / 1000} s.`,
      };
    }
    try {
      return await step();
    } finally {
      try {
        // Synchronous for the reason `acquire` gives: unlocking never waits.
        folder.unlockSync();
      } catch {
        // Closing the folder (or the process ending) releases it anyway.
      }
    }
  }

  /** First open: continue whatever chain the file holds. Runs under the lock. */
  async #openFirst(): Promise<Opened> {
    const opened = await openLogFile(this.path);
    if (!opened.ok) return opened;
    const { file } = opened.log;
    try {
      const read = await readChainTail(file, this.path);
      if (!read.ok) {
        file.close();
        return read;
      }
      const info = await file.stat();
      if (opened.created) await syncFolder(this.#folder);
      const mode = (info.mode ?? 0) & 0o777;
      if (info.isFile && (mode & 0o077) !== 0) {
        // Records are redacted, but still say who ran what: not for every local user.
        this.#warn(
          `htmcp: warning: the audit log "${this.path}" has mode 0${mode.toString(8)}; ` +
            `htmcp creates it 0600. Run: chmod 600 "${this.path}"`,
        );
      }
      this.#adopt(opened.log, read.tail);
      return { ok: true };
    } catch (error) {
      file.close();
      return {
        ok: false,
        reason: `Cannot open the audit log "${this.path}": ${messageOf(error)}.`,
      };
    }
  }

  #adopt(log: LogFile, tail: ChainTail | null): void {
    if (this.#current !== null && this.#current !== log) {
      // Deferred outcomes in the file being left are made durable first:
      // no later append's fdatasync reaches that file.
      this.#syncLeaving(this.#current.file);
      this.#current.file.close();
    }
    this.#current = log;
    this.#fileDay = null;
    this.#tail = tail;
    this.#knownEnd = tail?.size ?? 0;
    if (tail !== null) this.#knownHead = { seq: tail.lastSeq, hash: tail.lastHash };
  }

  #warnSyncFailed(error: unknown): void {
    this.#warn(
      `htmcp: warning: cannot fdatasync the audit log "${this.path}": ${messageOf(error)}.`,
    );
  }

  /** Synchronous (rare: a file is left at rotation or on finding another there). */
  #syncLeaving(file: Deno.FsFile): void {
    if (this.#unsynced !== file) return;
    this.#unsynced = null;
    try {
      file.syncDataSync();
    } catch (error) {
      this.#warnSyncFailed(error);
    }
  }

  /**
   * One append under the lock: check the path, link, write, fdatasync (or,
   * with `defer`, leave the fdatasync to the next append or the timer).
   */
  async #commit(
    bodies: readonly RecordBody[],
    written: (seqs: readonly number[]) => void = () => {},
    defer = false,
  ): Promise<Committed> {
    if (this.#halted !== null) return { ok: false, reason: this.#halted };
    if (this.#current === null) {
      const opened = await this.#openFirst();
      if (!opened.ok) return opened;
    }
    // The SIGHUPs this check answers: those that came before it looked.
    const acks = this.#acks;
    const examined = await examineLog(this.path, this.#current!, this.#knownEnd, this.#knownHead);
    switch (examined.kind) {
      case "refused":
        return this.#refuse(examined.reason);
      case "adopt":
        this.#adopt(examined.log, null);
        this.#pendingSegment = null;
        break;
      case "missing": {
        const halted = this.#haltOn(examined.found);
        if (halted !== null) return halted;
        const created = await openLogFile(this.path);
        if (!created.ok) {
          return this.#refuse(
            created.missingFolder
              ? `The audit log "${this.path}" was removed while htmcp had it open, and its folder is gone.`
              : created.reason,
          );
        }
        this.#adopt(created.log, null);
        this.#pendingSegment = {
          found: examined.found,
          previous_seq: examined.previous.seq,
          previous_sha256: examined.previous.hash,
          found_bytes: 0,
          first_displaced_seq: null,
          previous_file: null,
        };
        await syncFolder(this.#folder);
        break;
      }
      case "segment": {
        const halted = this.#haltOn(examined.found);
        if (halted !== null) {
          if (examined.log !== this.#current) examined.log.file.close();
          return halted;
        }
        this.#adopt(examined.log, null);
        this.#pendingSegment = {
          found: examined.found,
          previous_seq: examined.previous.seq,
          previous_sha256: examined.previous.hash,
          found_bytes: examined.foundBytes,
          first_displaced_seq: examined.found === "file_truncated" ? this.#displacedSeq : null,
          previous_file: null,
        };
        break;
      }
      case "same":
        this.#knownEnd = examined.size;
        if (this.#tail !== null && this.#tail.size !== examined.size) this.#tail = null;
    }

    let file = this.#current!.file;
    if (this.#tail === null) {
      // Someone else appended (or the file is new): chain to what is really there.
      const read = await readChainTail(file, this.path);
      if (!read.ok) return this.#refuse(read.reason);
      this.#knownEnd = Math.max(this.#knownEnd, read.tail.size);
      const segment = this.#pendingSegment;
      this.#tail = segment !== null && read.tail.lastSeq === 0 && read.tail.damage === null
        // A file with nothing in it continues the previous file's chain, so
        // a series of files verifies as one chain.
        ? continuing({ seq: segment.previous_seq, hash: segment.previous_sha256 })
        : read.tail;
    }

    if (bodies.length > 0) {
      await this.#rotateIfDue(this.#tail);
      file = this.#current!.file;
    }

    const lead: RecordBody[] = [];
    if (this.#pendingSegment !== null) lead.push(buildSegment(this.#pendingSegment));
    if (this.#dropped !== null) {
      const dropped = this.#dropped;
      lead.push(buildRecordsDropped({
        count: dropped.count,
        first_ts: dropped.firstTs,
        last_ts: dropped.lastTs,
        reason: dropped.reason,
      }, this.#redact));
    }
    if (lead.length === 0 && bodies.length === 0) {
      this.#acksUsed = Math.max(this.#acksUsed, acks);
      return { ok: true, seqs: [], lastSeq: this.#tail.lastSeq };
    }

    const seqBefore = this.#tail.lastSeq;
    const batch = linkBatch(this.#tail, bodies, {
      writer: this.writer,
      policyHash: this.policyHash,
      ts: new Date().toISOString(),
      lead,
    });
    let sizeAfter: number;
    // A segment or records_dropped record explains the chain, and a
    // checkpoint due now must never name a head that is not yet on disk.
    const deferred = defer && lead.length === 0 &&
      !(this.#checkpoints?.isDue(seqBefore, batch.tail.lastSeq) ?? false);
    try {
      writeAll(file, batch.bytes);
      written(batch.seqs);
      if (deferred) {
        this.#unsynced = file;
        this.#armSyncTimer();
      } else {
        // Covers every byte of the file, the deferred outcomes' too.
        await file.syncData();
        if (this.#unsynced === file) this.#unsynced = null;
      }
      // fstat reads the inode in memory: synchronous, like the checks in examineLog.
      sizeAfter = file.statSync().size;
    } catch (error) {
      this.#tail = null;
      return {
        ok: false,
        reason: `Cannot write the audit log "${this.path}": ${messageOf(error)}.`,
      };
    }
    if (this.#pendingSegment?.found === "file_truncated") this.#displacedSeq = null;
    if (
      sizeAfter < batch.tail.size && sizeAfter >= batch.bytes.length &&
      this.#displacedSeq === null
    ) {
      // No htmcp writer appends while this one holds the lock, so a file
      // shorter than what was just appended, yet holding at least the batch,
      // was truncated between the check and the write (copytruncate does
      // exactly that), and O_APPEND put the batch at its start. The records
      // are on disk (the write did not fail), but the file now starts with a
      // record chained to the old file, which only the next `segment` record
      // can explain. A file shorter than the batch was cut after the write:
      // the batch went with the copy (or is lost), nothing was displaced, and
      // the next check finds the cut.
      this.#displacedSeq = batch.tail.lastSeq - batch.count + 1;
    }
    this.#tail = batch.tail;
    this.#knownEnd = Math.max(this.#knownEnd, batch.tail.size);
    this.#knownHead = { seq: batch.tail.lastSeq, hash: batch.tail.lastHash };
    if (this.#checkpoints?.isDue(seqBefore, batch.tail.lastSeq)) {
      // Still under the lock: no other writer has appended since, so this is the chain's head.
      await this.#checkpoints.write(this.#knownHead, basename(this.path), this.writer, "interval");
    }
    this.#pendingSegment = null;
    this.#dropped = null;
    this.#acksUsed = Math.max(this.#acksUsed, acks);
    return { ok: true, seqs: batch.seqs, lastSeq: batch.tail.lastSeq };
  }

  /**
   * Closed mode, after the log was found replaced or truncated: every write
   * fails until `reopen()`, so a later file that happens to look plausible
   * (or grows past the old length) is never continued without the operator.
   */
  #halt(reason: string): Committed {
    this.#halted = reason;
    this.#tail = null;
    return { ok: false, reason };
  }

  /**
   * Built-in rotation, under the append lock: renames the full log beside
   * itself with its last `seq` and hash in the name (so names sort in chain
   * order and say where each file ends), and starts a new file whose first
   * record names it. A rotation that fails is warned about and skipped: it
   * is housekeeping, and the records still reach the current file.
   */
  async #rotateIfDue(tail: ChainTail): Promise<void> {
    const rotation = this.#rotation;
    if (rotation === null || this.#pendingSegment !== null) return;
    // Damage is closed off by a chain_reset in this file first.
    if (tail.lastSeq === 0 || tail.damage !== null || tail.size === 0) return;
    const bySize = rotation.bytes !== null && tail.size >= rotation.bytes;
    const today = new Date().toISOString().slice(0, 10);
    const byDay = rotation.daily && (await this.#firstDay(today)) !== today;
    if (!bySize && !byDay) return;
    // The head about to be signed must be on disk, deferred outcomes included.
    await this.#syncDeferred();
    const head = { seq: tail.lastSeq, hash: tail.lastHash };
    const target = `${this.path}.${String(head.seq).padStart(12, "0")}-${head.hash.slice(0, 16)}`;
    try {
      await Deno.rename(this.path, target);
    } catch (error) {
      this.#warn(
        `htmcp: warning: cannot rotate the audit log "${this.path}" to "${target}": ${
          messageOf(error)
        }; records go on to the current file.`,
      );
      return;
    }
    // The renamed file's head, signed under its new name: the series can
    // then be checked for a cut even in files no longer being written.
    await this.#checkpoints?.write(head, basename(target), this.writer, "rotation");
    const created = await openLogFile(this.path);
    if (!created.ok) {
      // The renamed file is still open: the next append finds the path
      // missing and starts the new file then, naming the same head.
      this.#warn(`htmcp: warning: ${created.reason}`);
      return;
    }
    this.#adopt(created.log, continuing(head));
    this.#pendingSegment = {
      found: "rotated",
      previous_seq: head.seq,
      previous_sha256: head.hash,
      found_bytes: 0,
      first_displaced_seq: null,
      previous_file: basename(target),
    };
    await syncFolder(this.#folder);
  }

  /**
   * At `close()`, under the lock: the head of the file now at the path
   * (other writers may have appended after this one), so records written
   * after the last interval checkpoint are covered too.
   */
  async #shutdownCheckpoint(): Promise<Opened> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.path, { read: true });
    } catch (error) {
      this.#warn(`htmcp: warning: no shutdown audit checkpoint: ${messageOf(error)}.`);
      return { ok: true };
    }
    try {
      const read = await readChainTail(file, this.path);
      if (read.ok && read.tail.lastSeq > 0) {
        const head = { seq: read.tail.lastSeq, hash: read.tail.lastHash };
        await this.#checkpoints!.write(head, basename(this.path), this.writer, "shutdown");
      }
    } finally {
      file.close();
    }
    return { ok: true };
  }

  /** The UTC day of the current file's first record (`today` for an empty file). */
  async #firstDay(today: string): Promise<string> {
    if (this.#fileDay === null) {
      const first = await readFirstRecord(this.#current!.file);
      this.#fileDay = first === null ? today : first.ts.slice(0, 10);
    }
    return this.#fileDay;
  }

  /** In closed mode, a halt for findings the operator must accept; null otherwise. */
  #haltOn(found: SegmentFinding): Committed | null {
    const what = HALTING_FINDINGS.get(found);
    const acknowledged = this.#acks > this.#acksUsed;
    if (this.failMode !== "closed" || acknowledged || what === undefined) return null;
    return this.#halt(
      `The audit log "${this.path}" was ${what} while htmcp had it open (it held seq ${this.#knownHead.seq}); ` +
        `calls are refused until the operator sends SIGHUP to accept the file now at that path.`,
    );
  }

  /** This batch fails; the next write checks again (a race with logrotate is transient). */
  #refuse(reason: string): Committed {
    this.#tail = null;
    return { ok: false, reason };
  }

  #fail(reason: string, isRecord = true): AuditWriteResult {
    if (isRecord && this.failMode === "open" && !this.#closed) {
      const now = new Date().toISOString();
      if (this.#dropped === null) {
        this.#dropped = { count: 1, firstTs: now, lastTs: now, reason };
      } else {
        this.#dropped.count += 1;
        this.#dropped.lastTs = now;
        this.#dropped.reason = reason;
      }
    }
    this.#warn(
      this.failMode === "open"
        ? `htmcp: warning: audit record not written; continuing because audit_fail_mode is "open": ${reason}`
        : `htmcp: audit record not written; the call is refused because audit_fail_mode is "closed": ${reason}`,
    );
    return { ok: false, reason };
  }
}

type Committed =
  | { readonly ok: true; readonly seqs: readonly number[]; readonly lastSeq: number }
  | { readonly ok: false; readonly reason: string };

/**
 * Makes a newly created log's directory entry durable, so a crash right after
 * the first record cannot lose the file itself. Best effort: the record's own
 * fdatasync still holds.
 */
async function syncFolder(folder: Deno.FsFile | null): Promise<void> {
  try {
    await folder?.sync();
  } catch {
    // best effort, see above
  }
}
