/**
 * The operator log's stderr while the server serves: written asynchronously,
 * one write at a time, never blocking the event loop.
 *
 * Why: a write to stderr (`console.error`) blocks the whole process once the
 * pipe is full, and an MCP client that pipes the server's stderr and never
 * reads it fills the pipe's 64 KiB after a few hundred calls' info lines; the
 * server then froze mid-call, audit and timers included. Here a line is
 * queued instead, and once `maxBacklogBytes` wait unwritten the reader is
 * taken to have stopped: further lines are dropped and counted (the log is
 * for a person, and the audit log, a file, keeps every call), and when the
 * backlog has drained a notice says how many were lost. One write in flight
 * at most, because each waiting stdio write holds one of the runtime's
 * blocking threads, which the audit's fdatasync also needs.
 *
 * @module
 */
import { concatChunks } from "../streams/mod.ts";

/** Where the lines go: `Deno.stderr` in production. */
export interface LineOutput {
  write(bytes: Uint8Array): Promise<number>;
}

/** The notice written once lines were dropped and the backlog drained. */
export type DroppedNotice = (count: number) => string;

/** Queued, bounded, asynchronous lines. */
export class BoundedLines {
  readonly #output: LineOutput;
  readonly #maxBacklogBytes: number;
  readonly #notice: DroppedNotice;
  readonly #encoder = new TextEncoder();
  readonly #queue: Uint8Array[] = [];
  #queued = 0;
  #dropped = 0;
  #writing: Promise<void> | null = null;
  #failed = false;

  /**
   * @param output Where lines are written.
   * @param maxBacklogBytes How many unwritten bytes may wait before lines are dropped.
   * @param notice The line saying how many were dropped (without its newline).
   */
  constructor(output: LineOutput, maxBacklogBytes: number, notice: DroppedNotice) {
    this.#output = output;
    this.#maxBacklogBytes = maxBacklogBytes;
    this.#notice = notice;
  }

  /** Lines dropped since the last notice. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Queues one line (its newline is added); dropped when the backlog is full. */
  write(line: string): void {
    if (this.#failed) return;
    const bytes = this.#encoder.encode(`${line}\n`);
    if (this.#queued + bytes.byteLength > this.#maxBacklogBytes) {
      this.#dropped++;
      return;
    }
    this.#queue.push(bytes);
    this.#queued += bytes.byteLength;
    this.#writing ??= this.#pump();
  }

  /**
   * Waits until everything queued is written, or `timeoutMs` passed (a
   * reader that stopped must not keep the process from exiting).
   */
  async flush(timeoutMs: number): Promise<void> {
    const writing = this.#writing;
    if (writing === null) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
    await Promise.race([writing, late]);
    clearTimeout(timer);
  }

  async #pump(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        // Everything queued in one write: fewer waits on a slow reader.
        const batch = this.#queue.splice(0, this.#queue.length);
        const total = batch.reduce((sum, part) => sum + part.byteLength, 0);
        let chunk: Uint8Array = batch.length === 1 ? batch[0]! : concatChunks(batch, total);
        while (chunk.byteLength > 0) {
          const written = await this.#output.write(chunk);
          chunk = chunk.subarray(written);
          this.#queued -= written;
        }
        if (this.#queue.length === 0 && this.#dropped > 0) {
          const count = this.#dropped;
          this.#dropped = 0;
          const bytes = this.#encoder.encode(`${this.#notice(count)}\n`);
          this.#queue.push(bytes);
          this.#queued += bytes.byteLength;
        }
      }
    } catch {
      // stderr is gone (closed by the client): nothing more can be said there.
      this.#failed = true;
      this.#queue.length = 0;
      this.#queued = 0;
    } finally {
      this.#writing = null;
    }
  }
}
