/**
 * The last bytes of a running command's output, for progress notifications
 * and a job's `tail`. What leaves here is redacted with the server's
 * redactor, the same one that redacts the final result.
 *
 * Why a window can still be trusted: a secret cut at the window's start is
 * no longer recognisable, so the first (partial) line of a window that does
 * not begin at the stream's start is dropped before redaction; and a private
 * key whose BEGIN line fell out of the window is dropped up to its END line.
 * Only whole lines the redactor saw in full are shown.
 *
 * @module
 */
import { BoundedCapture, type OutputObserver } from "../exec/mod.ts";
import type { Redactor } from "../redact/mod.ts";

/** Raw bytes kept per stream while a command runs. */
export const LIVE_WINDOW_BYTES = 16 * 1024;
/** Lines shown per stream in a progress message. */
export const TAIL_LINES = 10;
/** Bytes shown per stream in a progress message at most. */
export const TAIL_BYTES = 1024;

/**
 * Receives a running command's output (the executor's `live` observer) and
 * keeps the last `LIVE_WINDOW_BYTES` of each stream, raw; only what
 * `tail` and `message` return, redacted, ever leaves it.
 *
 * @example
 * ```ts
 * import { LiveOutput } from "./mod.ts";
 * import { createRedactor } from "../redact/mod.ts";
 * const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
 * const live = new LiveOutput();
 * live.push("stdout", new TextEncoder().encode("step 1\nstep 2\n"));
 * live.bytes("stdout"); // 14
 * live.tail("stdout", redactor); // "step 1\nstep 2"
 * ```
 */
export class LiveOutput implements OutputObserver {
  readonly #streams = {
    stdout: new BoundedCapture(0, LIVE_WINDOW_BYTES),
    stderr: new BoundedCapture(0, LIVE_WINDOW_BYTES),
  };

  /** Takes one raw chunk of `stream`, as the executor reads it; older bytes leave the window. */
  push(stream: "stdout" | "stderr", chunk: Uint8Array): void {
    this.#streams[stream].push(chunk);
  }

  /** Bytes the stream produced so far. */
  bytes(stream: "stdout" | "stderr"): number {
    return this.#streams[stream].totalBytes;
  }

  /** The redacted last lines of `stream` (at most `TAIL_LINES` lines and `TAIL_BYTES` bytes). */
  tail(stream: "stdout" | "stderr", redactor: Redactor): string {
    const capture = this.#streams[stream];
    const window = capture.tail();
    let text = new TextDecoder("utf-8", { fatal: false }).decode(window);
    if (capture.totalBytes > window.byteLength) {
      // The window starts mid-stream: its first line may be the end of a secret.
      const newline = text.indexOf("\n");
      text = newline === -1 ? "" : text.slice(newline + 1);
    }
    const end = text.lastIndexOf("-----END ");
    if (end !== -1 && text.lastIndexOf("-----BEGIN ", end) === -1) {
      // A key's body whose header is outside the window: drop through its END line.
      const after = text.indexOf("\n", end);
      text = after === -1 ? "" : text.slice(after + 1);
    }
    return lastLines(redactor.redact(text), TAIL_LINES, TAIL_BYTES);
  }

  /** One progress message: the byte counts and both streams' redacted tails. */
  message(elapsedMs: number, redactor: Redactor): string {
    const lines = [
      `running for ${Math.round(elapsedMs / 1000)} s; stdout ${
        this.bytes("stdout")
      } bytes, stderr ${this.bytes("stderr")} bytes`,
    ];
    for (const stream of ["stdout", "stderr"] as const) {
      const tail = this.tail(stream, redactor);
      if (tail !== "") lines.push(`--- last ${stream} ---`, tail);
    }
    return lines.join("\n");
  }
}

/** The last `maxLines` lines of `text`, cut further from the front to `maxBytes` UTF-8 bytes. */
export function lastLines(text: string, maxLines: number, maxBytes: number): string {
  const trimmed = text.endsWith("\n") ? text.slice(0, -1) : text;
  const lines = trimmed.split("\n");
  let shown = lines.slice(Math.max(0, lines.length - maxLines)).join("\n");
  const bytes = new TextEncoder().encode(shown);
  if (bytes.byteLength > maxBytes) {
    let start = bytes.byteLength - maxBytes;
    // Forward to a UTF-8 boundary: continuation bytes are 0b10xxxxxx.
    while (start < bytes.byteLength && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
    shown = new TextDecoder().decode(bytes.subarray(start));
  }
  return shown;
}
