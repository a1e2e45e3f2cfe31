/**
 * Writes queued for one output, one at a time, without ever blocking the
 * event loop: what the stdio transport's answers (stdout) and the operator
 * log (stderr) both go through. A reader that stops reading makes the
 * backlog grow instead of freezing the process in a blocking write; what a
 * caller does about a backlog (close the session, drop log lines) is its
 * own decision, read from `backlogBytes`. One write in flight at most:
 * each waiting stdio write holds one of the runtime's blocking threads,
 * which file operations (the audit's fdatasync) need too.
 *
 * @module
 */
import { after, type Timer } from "../timers/mod.ts";

/** Where the bytes go: `Deno.stdout` or `Deno.stderr` in production. */
export interface ByteSink {
  /** Writes some of `bytes`; resolves to how many were written. */
  write(bytes: Uint8Array): Promise<number>;
}

/** What the owner hears of the writes. */
export interface SerialWritesHooks {
  /** A write failed (the reader is gone); nothing more is written. */
  readonly onError: (error: unknown) => void;
  /** The backlog has just been written out in full. */
  readonly onIdle?: () => void;
}

/** A queue of writes to one output, written in order, one at a time. */
export class SerialWrites {
  readonly #output: ByteSink;
  readonly #hooks: SerialWritesHooks;
  readonly #queue: Uint8Array[] = [];
  #queued = 0;
  #writing: Promise<void> | null = null;
  #stopped = false;

  /**
   * Makes an empty queue for `output`.
   *
   * @param output Where the bytes are written.
   * @param hooks Told of a failed write, and each time the backlog empties.
   */
  constructor(output: ByteSink, hooks: SerialWritesHooks) {
    this.#output = output;
    this.#hooks = hooks;
  }

  /** Bytes queued and not yet written (the write in flight included). */
  get backlogBytes(): number {
    return this.#queued;
  }

  /** Queues `bytes`; ignored once stopped. */
  write(bytes: Uint8Array): void {
    if (this.#stopped) return;
    this.#queue.push(bytes);
    this.#queued += bytes.byteLength;
    this.#writing ??= this.#pump();
  }

  /** Drops what is queued and writes nothing more (a chunk being written is finished). */
  stop(): void {
    this.#stopped = true;
    this.#queue.length = 0;
    this.#queued = 0;
  }

  /**
   * Waits until the backlog is written out, or `timeoutMs` passed (a reader
   * that stopped must not keep the process from exiting).
   */
  async flush(timeoutMs: number): Promise<void> {
    const writing = this.#writing;
    if (writing === null) return;
    let timer: Timer | undefined;
    const late = new Promise<void>((resolve) => timer = after(timeoutMs, resolve));
    await Promise.race([writing, late]);
    timer?.cancel();
  }

  async #pump(): Promise<void> {
    try {
      while (this.#queue.length > 0 && !this.#stopped) {
        let chunk = this.#queue.shift() as Uint8Array;
        // A chunk once started is finished: a reader never gets half a line.
        while (chunk.byteLength > 0) {
          const written = await this.#output.write(chunk);
          chunk = chunk.subarray(written);
          if (!this.#stopped) this.#queued -= written;
        }
        // The owner may queue more here (a notice): the loop takes it too.
        if (this.#queue.length === 0 && !this.#stopped) this.#hooks.onIdle?.();
      }
    } catch (error) {
      this.stop();
      this.#hooks.onError(error);
    } finally {
      this.#writing = null;
    }
  }
}
