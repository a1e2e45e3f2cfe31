/**
 * Reading an audit log for people: records streamed line by line (the file
 * is never loaded whole), and each call's attempt joined with its outcome
 * into one row.
 *
 * A refused call is one `attempt` record (`verdict: "deny"`), so its row is
 * complete at once; an allowed one is complete when its `outcome` arrives.
 * `explain` records are rows of their own. Rows are emitted in the order
 * calls completed. Attempts still waiting at the end of the read (a call in
 * flight, or one that never got an outcome) are emitted last, without one;
 * at most `MAX_PENDING` wait at a time, the oldest emitted first.
 *
 * @module
 */

/** Attempts held while their outcome is awaited; a log with more in flight is not real. */
const MAX_PENDING = 100_000;

/** One call, as `show`, `tail` and `stats` present it. */
export interface CallRow {
  /** ISO 8601 time of the attempt (or explain) record. */
  readonly time: string;
  /** `seq` of that record. */
  readonly seq: number;
  readonly callId: string;
  /** OAuth client id, or `stdio` for the local operator's process. */
  readonly client: string;
  readonly tool: string;
  /** The command as logged (already redacted by the writer). */
  readonly command: string;
  /** The policy's sentence as logged (redacted by the writer). */
  readonly reason: string;
  /** `allow` or `deny`, as the policy decided. */
  readonly verdict: string;
  /** The result code: the refusal's, the outcome's, or null when no outcome was written. */
  readonly code: string | null;
  readonly exitCode: number | null;
  readonly durationMs: number | null;
  /** True for an `explain_command` call (nothing ran). */
  readonly explain: boolean;
}

type Json = Record<string, unknown>;

function text(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function rowFrom(record: Json, explain: boolean): CallRow {
  return {
    time: text(record.ts),
    seq: numberOrNull(record.seq) ?? 0,
    callId: text(record.call_id),
    client: typeof record.client_id === "string" ? record.client_id : "stdio",
    tool: text(record.tool, explain ? "explain_command" : "run_command"),
    command: text(record.command_raw),
    reason: text(record.reason),
    verdict: text(record.verdict, "allow"),
    code: typeof record.code === "string" ? record.code : null,
    exitCode: null,
    durationMs: null,
    explain,
  };
}

/**
 * Joins records into call rows, one record at a time.
 *
 * @example
 * ```ts
 * const calls = new CallAssembler();
 * for await (const record of readRecords(path)) for (const row of calls.add(record)) print(row);
 * for (const row of calls.finish()) print(row);
 * ```
 */
export class CallAssembler {
  readonly #pending = new Map<string, CallRow>();

  /** The rows that `record` completes (none, one, or an evicted one and more). */
  add(record: Json): CallRow[] {
    const kind = record.kind;
    if (kind === "explain") return [rowFrom(record, true)];
    if (kind === "attempt") {
      const row = rowFrom(record, false);
      if (row.verdict === "deny" || row.callId === "") return [row];
      const out: CallRow[] = [];
      if (this.#pending.size >= MAX_PENDING) {
        const [oldest, waiting] = this.#pending.entries().next().value!;
        this.#pending.delete(oldest);
        out.push(waiting);
      }
      this.#pending.set(row.callId, row);
      return out;
    }
    if (kind === "outcome") {
      const callId = text(record.call_id);
      const attempt = this.#pending.get(callId);
      if (attempt === undefined) return [];
      this.#pending.delete(callId);
      return [{
        ...attempt,
        code: typeof record.code === "string" ? record.code : attempt.code,
        exitCode: numberOrNull(record.exit_code),
        durationMs: numberOrNull(record.duration_ms),
      }];
    }
    return [];
  }

  /** The attempts still waiting, oldest first; the assembler is empty afterwards. */
  finish(): CallRow[] {
    const rows = [...this.#pending.values()];
    this.#pending.clear();
    return rows;
  }
}

/** What `readRecords` could not parse, so the caller can say so. */
export interface ReadStats {
  bytes: number;
  lines: number;
  unreadable: number;
}

/**
 * Splits a byte stream into JSON records, one per line. A line that is not a
 * JSON object (a write cut short, a damaged line) is counted, not thrown.
 */
export async function* recordsFrom(
  stream: ReadableStream<Uint8Array>,
  stats: ReadStats,
): AsyncGenerator<Json> {
  const decoder = new TextDecoder();
  let carry = "";
  for await (const chunk of stream) {
    stats.bytes += chunk.byteLength;
    const textChunk = carry + decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = textChunk.indexOf("\n"); end !== -1; end = textChunk.indexOf("\n", start)) {
      const record = parseLine(textChunk.slice(start, end), stats);
      if (record !== null) yield record;
      start = end + 1;
    }
    carry = textChunk.slice(start);
  }
  carry += decoder.decode();
  if (carry.length > 0) {
    const record = parseLine(carry, stats);
    if (record !== null) yield record;
  }
}

/** One line as a record, or null (blank, or counted as unreadable). */
export function parseLine(line: string, stats: ReadStats): Json | null {
  if (line.trim() === "") return null;
  stats.lines++;
  try {
    const value: unknown = JSON.parse(line);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Json;
  } catch {
    // Counted below.
  }
  stats.unreadable++;
  return null;
}
