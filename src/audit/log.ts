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
 * still resolves only after that flush.
 *
 * Deny on failure: any error while writing marks the chain position unknown;
 * the next write re-reads the file's tail first, so a record that reached the
 * disk despite an error (a failed `fdatasync`) is chained to, and bytes a
 * failed write left behind are closed off by a `chain_reset` record.
 *
 * @module
 */

import { dirname } from "node:path";
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
import { linkBatch } from "./chain.ts";
import { type ChainTail, readChainTail } from "./tail.ts";

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
}

/** `ok` with the log, or the sentence saying why it could not be opened. */
export type AuditOpenResult =
  | { readonly ok: true; readonly log: AuditLog }
  | { readonly ok: false; readonly reason: string };

type Opened = { readonly ok: true } | { readonly ok: false; readonly reason: string };

interface Pending {
  readonly body: RecordBody;
  readonly resolve: (result: AuditWriteResult) => void;
}

/** Upper bound on records flushed together, so one flush stays short. */
const MAX_BATCH = 256;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const n = await file.write(bytes.subarray(written));
    if (n <= 0) throw new Error(`write returned ${n}`);
    written += n;
  }
}

/** An open audit log. Create with `AuditLog.open`. */
export class AuditLog {
  /** The log's path as configured. */
  readonly path: string;
  /** `closed`: callers refuse a call whose attempt was not written. `open`: they run it anyway. */
  readonly failMode: AuditFailMode;
  readonly #redact: Redact;
  readonly #redactArgv: RedactArgv | undefined;
  readonly #warn: (line: string) => void;
  #file: Deno.FsFile | null = null;
  /** Where the chain stands; null when unknown (never opened, or after a failed write). */
  #tail: ChainTail | null = null;
  #queue: Pending[] = [];
  /** True while `#drain` runs; set and cleared synchronously, so no queued entry is stranded. */
  #draining = false;
  #drained: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(path: string, failMode: AuditFailMode, options: AuditLogOptions) {
    this.path = path;
    this.failMode = failMode;
    this.#redact = options.redact;
    this.#redactArgv = options.redactArgv;
    this.#warn = options.warn ?? ((line) => console.error(line));
  }

  /**
   * Opens (creating with mode 0600 if missing) the log at `path` for appending
   * and continues the chain from its last complete record. The parent folder
   * must exist: htmcp never creates folders for its log, so a mistyped path
   * fails loudly instead of logging somewhere unexpected. An exclusive lock
   * keeps a second htmcp process (or a second `AuditLog`) from forking the chain.
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
   * const opened = await AuditLog.open("/var/log/htmcp/audit.jsonl", "closed", { redact });
   * if (!opened.ok) throw new Error(opened.reason);
   * const written = await opened.log.writeAttempt(fields);
   * if (!written.ok && opened.log.failMode === "closed") return refuse("AUDIT_UNAVAILABLE");
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
    const opened = await log.#openFile();
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
    return this.#enqueue(buildAttempt(fields, this.#redact, this.#redactArgv));
  }

  /** Records how a call ended: codes and byte counts, never output. */
  writeOutcome(fields: OutcomeFields): Promise<AuditWriteResult> {
    return this.#enqueue(buildOutcome(fields));
  }

  /** Records an `explain_command` call and its verdict. */
  writeExplain(fields: ExplainFields): Promise<AuditWriteResult> {
    return this.#enqueue(buildExplain(fields, this.#redact, this.#redactArgv));
  }

  /**
   * Records an event of another subsystem.
   *
   * @throws {TypeError} when a field is reserved, names content or a credential, or is nested
   */
  writeEvent<K extends AuditEventName>(
    event: K,
    fields: AuditEventFields[K],
  ): Promise<AuditWriteResult> {
    return this.#enqueue(buildEvent(event, fields, this.#redact));
  }

  /** Waits for queued writes, then closes the file. Later writes report `{ ok: false }`. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#drained;
    this.#file?.close();
    this.#file = null;
  }

  #enqueue(body: RecordBody): Promise<AuditWriteResult> {
    if (this.#closed) {
      return Promise.resolve(this.#fail(`The audit log "${this.path}" is closed.`));
    }
    const written = new Promise<AuditWriteResult>((resolve) => this.#queue.push({ body, resolve }));
    if (!this.#draining) {
      this.#draining = true;
      this.#drained = this.#drain();
    }
    return written;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        let results: readonly AuditWriteResult[];
        try {
          results = await this.#commit(batch.map((entry) => entry.body));
        } catch (error) {
          // Not expected; still, a caller must never wait forever nor run unaudited.
          this.#tail = null;
          const reason = `Cannot write the audit log "${this.path}": ${messageOf(error)}`;
          results = batch.map(() => this.#fail(reason));
        }
        batch.forEach((entry, index) => entry.resolve(results[index]!));
      }
    } finally {
      // Cleared in the same synchronous step as the empty-queue check above, so
      // an entry queued after it starts a new drain instead of being stranded.
      this.#draining = false;
    }
  }

  async #commit(bodies: readonly RecordBody[]): Promise<readonly AuditWriteResult[]> {
    const failAll = (reason: string) => bodies.map(() => this.#fail(reason));
    if (this.#file === null) {
      const opened = await this.#openFile();
      if (!opened.ok) return failAll(opened.reason);
    }
    const file = this.#file!;
    const info = await file.stat();
    if (info.isFile && info.nlink === 0) {
      return failAll(
        `The audit log "${this.path}" was removed while htmcp had it open; restart htmcp to start a new log.`,
      );
    }
    // Someone else appended (the lock is advisory): chain to what is really there.
    if (this.#tail === null || info.size !== this.#tail.size) {
      const read = await readChainTail(file, this.path);
      if (!read.ok) return failAll(read.reason);
      this.#tail = read.tail;
    }

    const batch = linkBatch(this.#tail, bodies, new Date().toISOString());
    try {
      await writeAll(file, batch.bytes);
      await file.syncData();
    } catch (error) {
      this.#tail = null;
      return failAll(`Cannot write the audit log "${this.path}": ${messageOf(error)}.`);
    }
    this.#tail = batch.tail;
    return batch.seqs.map((seq) => ({ ok: true, seq }));
  }

  async #openFile(): Promise<Opened> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.path, { read: true, append: true, create: true, mode: 0o600 });
    } catch (error) {
      return {
        ok: false,
        reason: `Cannot open the audit log "${this.path}": ${messageOf(error)}.`,
      };
    }
    try {
      if (!(await file.tryLock(true))) {
        file.close();
        return {
          ok: false,
          reason: `Cannot open the audit log "${this.path}": another writer holds its lock.`,
        };
      }
      const read = await readChainTail(file, this.path);
      if (!read.ok) {
        file.close();
        return read;
      }
      const info = await file.stat();
      if (info.isFile && info.size === 0) await syncParentFolder(this.path);
      const mode = (info.mode ?? 0) & 0o777;
      if (info.isFile && (mode & 0o077) !== 0) {
        // Records are redacted, but still say who ran what: not for every local user.
        this.#warn(
          `htmcp: warning: the audit log "${this.path}" has mode 0${mode.toString(8)}; ` +
            `htmcp creates it 0600. Run: chmod 600 "${this.path}"`,
        );
      }
      this.#file = file;
      this.#tail = read.tail;
      return { ok: true };
    } catch (error) {
      file.close();
      return {
        ok: false,
        reason: `Cannot open the audit log "${this.path}": ${messageOf(error)}.`,
      };
    }
  }

  #fail(reason: string): AuditWriteResult {
    this.#warn(
      this.failMode === "open"
        ? `htmcp: warning: audit record not written; continuing because audit_fail_mode is "open": ${reason}`
        : `htmcp: audit record not written; the call is refused because audit_fail_mode is "closed": ${reason}`,
    );
    return { ok: false, reason };
  }
}

/**
 * Makes a newly created log's directory entry durable, so a crash right after
 * the first record cannot lose the file itself. Best effort: under a narrow
 * Deno read grant the folder may not be openable, and the record's own
 * fdatasync still holds.
 */
async function syncParentFolder(path: string): Promise<void> {
  try {
    const folder = await Deno.open(dirname(path), { read: true });
    try {
      await folder.sync();
    } finally {
      folder.close();
    }
  } catch {
    // best effort, see above
  }
}
