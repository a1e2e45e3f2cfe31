/**
 * The operator log's stderr while the server serves: never blocking the
 * event loop (`SerialWrites`), and bounded.
 *
 * Why: a write to stderr (`console.error`) blocks the whole process once the
 * pipe is full, and an MCP client that pipes the server's stderr and never
 * reads it fills the pipe's 64 KiB after a few hundred calls' info lines; the
 * server then froze mid-call, audit and timers included. Here a line is
 * queued instead, and once `maxBacklogBytes` wait unwritten the reader is
 * taken to have stopped: further lines are dropped and counted (the log is
 * for a person, and the audit log, a file, keeps every call), and when the
 * backlog has drained a notice says how many were lost. Answers on stdout,
 * which cannot be dropped, close the session instead (the stdio transport).
 *
 * @module
 */
import { type ByteSink, SerialWrites } from "../streams/mod.ts";

/** The notice written once lines were dropped and the backlog drained. */
export type DroppedNotice = (count: number) => string;

/** Queued, bounded, asynchronous lines. */
export class BoundedLines {
  readonly #writes: SerialWrites;
  readonly #maxBacklogBytes: number;
  readonly #encoder = new TextEncoder();
  #dropped = 0;

  /**
   * Makes an empty, bounded queue of lines for `output`.
   *
   * @param output Where lines are written.
   * @param maxBacklogBytes How many unwritten bytes may wait before lines are dropped.
   * @param notice The line saying how many were dropped (without its newline).
   */
  constructor(output: ByteSink, maxBacklogBytes: number, notice: DroppedNotice) {
    this.#maxBacklogBytes = maxBacklogBytes;
    this.#writes = new SerialWrites(output, {
      // stderr is gone (closed by the client): nothing more can be said there.
      onError: () => {},
      onIdle: () => {
        if (this.#dropped === 0) return;
        const count = this.#dropped;
        this.#dropped = 0;
        this.#writes.write(this.#encoder.encode(`${notice(count)}\n`));
      },
    });
  }

  /** Lines dropped since the last notice. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Queues one line (its newline is added); dropped when the backlog is full. */
  write(line: string): void {
    const bytes = this.#encoder.encode(`${line}\n`);
    if (this.#writes.backlogBytes + bytes.byteLength > this.#maxBacklogBytes) {
      this.#dropped++;
      return;
    }
    this.#writes.write(bytes);
  }

  /** Waits until every queued line is written, or `timeoutMs` passed. */
  flush(timeoutMs: number): Promise<void> {
    return this.#writes.flush(timeoutMs);
  }
}
