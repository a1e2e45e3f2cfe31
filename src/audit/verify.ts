/**
 * Hash-chain verification: finds the first broken or missing link.
 *
 * Each record's `seq` must be one more than the previous record's, and its
 * `prev` must be the SHA-256 of the previous line's bytes; the first record
 * has `seq` 1 and `prev` `GENESIS_HASH`. So editing a record breaks the link
 * of the record after it, and removing, inserting or moving a record breaks
 * `seq` (or, if `seq` was rewritten too, `prev`).
 *
 * What the chain cannot show on its own: removing records from the *end*, or
 * editing the last record, leaves a valid shorter chain; and anyone able to
 * write the file can recompute every hash after an edit. The report's `head`
 * (the last record's hash) is what to copy somewhere the server cannot write,
 * to pin the log up to that point.
 *
 * Damaged bytes (a write cut off by a crash or a full disk) are accepted only
 * when the very next record is the `chain_reset` the writer adds for them,
 * matching their length and hash; they are listed in `resets`, never hidden.
 *
 * A file may also start with a `segment` record instead of the genesis: the
 * writer began it after a rotation, or after it found the log replaced or
 * truncated. Its `prev` and `seq` then continue the previous file's head as
 * the record names it, so a series verifies as one chain (`verify_series.ts`);
 * every `segment` and `records_dropped` record is listed, never hidden.
 *
 * @module
 */

import { Sha256 } from "./sha256.ts";
import { concatBytes, type ParsedLine, parseRecordLine, sha256Hex } from "./line.ts";
import { GENESIS_HASH } from "./records.ts";

/** A damaged region the log closed off with a `chain_reset` record. */
export interface ChainResetNote {
  /** Line number (1-based) of the `chain_reset` record. */
  readonly line: number;
  /** `seq` of the `chain_reset` record. */
  readonly seq: number;
  /** First line of the damaged bytes. */
  readonly damagedLine: number;
  /** Length of the damaged bytes (lines joined by their newlines). */
  readonly damagedBytes: number;
}

/** A `segment` record: where the writer started anew, and what it found. */
export interface SegmentNote {
  /** 1-based line of the `segment` record in the file. */
  readonly line: number;
  /** Its `seq`. */
  readonly seq: number;
  /** `path_missing`, `new_empty_file`, `file_replaced` or `file_truncated`. */
  readonly found: string;
  /** The last head the writer knew before: `seq` and line hash. */
  readonly previousSeq: number;
  /** The line hash of that previous head, which the previous file must end with. */
  readonly previousSha256: string;
  /** `seq` of a record the writer's append displaced to the start of a truncated file; else null. */
  readonly firstDisplacedSeq: number | null;
}

/** A `records_dropped` record: records an open-mode writer could not write. */
export interface DroppedNote {
  /** 1-based line of the `records_dropped` record in the file. */
  readonly line: number;
  /** Its `seq`. */
  readonly seq: number;
  /** How many records the writer could not write. */
  readonly count: number;
  /** When the first of them was due (ISO 8601 UTC). */
  readonly firstTs: string;
  /** When the last of them was due (ISO 8601 UTC). */
  readonly lastTs: string;
  /** The writer id that dropped them; null in records that predate writer ids. */
  readonly writer: string | null;
}

/** The verdict on a whole log. */
export type VerifyReport =
  | {
    readonly ok: true;
    /** Records in the chain, `chain_reset` records included. */
    readonly records: number;
    /** SHA-256 of the last record line (`GENESIS_HASH` for an empty log): pin it elsewhere. */
    readonly head: string;
    /** `seq` of the last record; 0 for an empty log. */
    readonly lastSeq: number;
    /** The first record, when it is a `segment` continuing a previous file. */
    readonly continues: SegmentNote | null;
    /**
     * `seq` of a first record that continues another file with no `segment`
     * in this file explaining it (only with `allowDisplacedStart`; the next
     * file of the series must explain it); otherwise null.
     */
    readonly displacedStart: number | null;
    readonly resets: readonly ChainResetNote[];
    readonly segments: readonly SegmentNote[];
    readonly dropped: readonly DroppedNote[];
  }
  | {
    readonly ok: false;
    /** 1-based line number where the chain first breaks. */
    readonly line: number;
    /** `seq` of the record on that line, or null when the line is not a record. */
    readonly seq: number | null;
    readonly problem: string;
  };

interface Damage {
  readonly firstLine: number;
  readonly problem: string;
  readonly hash: Sha256;
  bytes: number;
}

const NEWLINE = 0x0a;
const NEWLINE_BYTES = new Uint8Array([NEWLINE]);

/**
 * Checks a log fed in chunks of any size, holding one line at a time, so a
 * large log verifies in constant memory.
 */
export class ChainVerifier {
  #pieces: Uint8Array[] = [];
  #lineNo = 0;
  #expectedSeq = 1;
  #prevHash = GENESIS_HASH;
  #lastGoodSeq: number | null = null;
  #records = 0;
  #resets: ChainResetNote[] = [];
  #segments: SegmentNote[] = [];
  #dropped: DroppedNote[] = [];
  #continues: SegmentNote | null = null;
  /**
   * A first line that continues another file without a `segment` record: a
   * writer's append landed at the start of a file truncated under it. Held
   * until the writer's `segment` record naming it (`first_displaced_seq`)
   * explains it; unexplained, it is the verdict.
   */
  #displaced: { readonly seq: number; readonly failure: VerifyReport } | null = null;
  readonly #allowDisplacedStart: boolean;

  /**
   * Starts a verifier at the beginning of a file; feed it with `push`.
   *
   * @param options `allowDisplacedStart`: report an unexplained displaced
   *   first record as `displacedStart` instead of failing (for a series, whose
   *   next file may explain it)
   */
  constructor(options: { readonly allowDisplacedStart?: boolean } = {}) {
    this.#allowDisplacedStart = options.allowDisplacedStart ?? false;
  }
  #damage: Damage | null = null;
  #failure: VerifyReport | null = null;

  /** Feeds the next bytes of the log. */
  push(chunk: Uint8Array): void {
    let start = 0;
    for (let i = 0; i < chunk.length && this.#failure === null; i++) {
      if (chunk[i] !== NEWLINE) continue;
      this.#pieces.push(chunk.subarray(start, i));
      const line = this.#pieces.length === 1 ? this.#pieces[0]! : concatBytes(this.#pieces);
      this.#pieces = [];
      start = i + 1;
      this.#lineNo += 1;
      this.#onLine(line);
    }
    if (this.#failure === null && start < chunk.length) {
      // Copied: the caller may reuse its buffer for the next chunk.
      this.#pieces.push(chunk.slice(start));
    }
  }

  /**
   * Ends the input: an unterminated last line or unclosed damage is reported here.
   *
   * @returns the verdict once all bytes were pushed
   */
  finish(): VerifyReport {
    // An unexplained start is the earliest problem, whatever came after it.
    if (this.#displaced !== null && (!this.#allowDisplacedStart || this.#failure !== null)) {
      return this.#displaced.failure;
    }
    if (this.#failure !== null) return this.#failure;
    if (this.#damage !== null) return this.#unclosedDamage(this.#damage);
    if (this.#pieces.some((piece) => piece.length > 0)) {
      return {
        ok: false,
        line: this.#lineNo + 1,
        seq: null,
        problem: "the last line is incomplete (no final newline): a write was cut off, " +
          "e.g. by a crash or a full disk; htmcp closes it with a chain_reset record when it next opens the log",
      };
    }
    return {
      ok: true,
      records: this.#records,
      head: this.#prevHash,
      lastSeq: this.#lastGoodSeq ?? 0,
      continues: this.#continues,
      displacedStart: this.#displaced?.seq ?? null,
      resets: this.#resets,
      segments: this.#segments,
      dropped: this.#dropped,
    };
  }

  #onLine(bytes: Uint8Array): void {
    const parsed = parseRecordLine(bytes);
    if (!parsed.ok) {
      if (this.#damage === null) {
        this.#damage = {
          firstLine: this.#lineNo,
          problem: parsed.problem,
          hash: new Sha256(),
          bytes: 0,
        };
      } else {
        this.#damage.hash.update(NEWLINE_BYTES);
        this.#damage.bytes += 1;
      }
      this.#damage.hash.update(bytes);
      this.#damage.bytes += bytes.length;
      return;
    }
    const record = parsed.line;
    const fail = (problem: string) => {
      this.#failure = { ok: false, line: this.#lineNo, seq: record.seq, problem };
    };
    if (this.#damage !== null) {
      const damage = this.#damage;
      if (record.kind !== "chain_reset") {
        this.#failure = this.#unclosedDamage(damage);
        return;
      }
      const fields = record.fields;
      if (
        fields.cause !== "incomplete_line" || fields.damaged_bytes !== damage.bytes ||
        record.prev !== damage.hash.digestHex()
      ) {
        return fail(
          `the chain_reset record does not match the ${damage.bytes} damaged bytes from line ${damage.firstLine}`,
        );
      }
      if (
        fields.last_good_seq !== this.#lastGoodSeq || fields.last_good_sha256 !== this.#prevHash
      ) {
        return fail(
          "the chain_reset record does not name the last complete record before the damage",
        );
      }
      if (record.seq !== this.#expectedSeq) return fail(this.#seqProblem(record.seq));
      this.#resets.push({
        line: this.#lineNo,
        seq: record.seq,
        damagedLine: damage.firstLine,
        damagedBytes: damage.bytes,
      });
      this.#damage = null;
    } else {
      if (record.kind === "chain_reset") {
        return fail("a chain_reset record appears where no damaged bytes precede it");
      }
      if (
        this.#lineNo === 1 && record.kind !== "segment" &&
        (record.seq !== 1 || record.prev !== GENESIS_HASH)
      ) {
        this.#displaced = {
          seq: record.seq,
          failure: {
            ok: false,
            line: 1,
            seq: record.seq,
            problem: record.seq !== 1
              ? this.#seqProblem(record.seq)
              : "prev is not the genesis hash, so the log does not start a chain",
          },
        };
        this.#continues = {
          line: 1,
          seq: record.seq,
          found: "file_truncated",
          previousSeq: record.seq - 1,
          previousSha256: record.prev,
          firstDisplacedSeq: record.seq,
        };
        this.#accept(record.seq, bytes);
        return;
      }
      if (record.kind === "segment" && this.#lineNo === 1) {
        // The file continues another one: the record itself names the head it
        // continues, and must be linked to exactly that.
        const note = segmentNote(record, this.#lineNo);
        if (note === null) return fail("the segment record's fields are malformed");
        if (record.prev !== note.previousSha256 || record.seq !== note.previousSeq + 1) {
          return fail("the segment record does not continue the head it names");
        }
        this.#continues = note;
        this.#segments.push(note);
        this.#accept(record.seq, bytes);
        return;
      }
      if (record.seq !== this.#expectedSeq) return fail(this.#seqProblem(record.seq));
      if (record.prev !== this.#prevHash) {
        return fail(
          this.#lineNo === 1
            ? "prev is not the genesis hash, so the log does not start a chain"
            : `prev is not the SHA-256 of line ${this.#lineNo - 1}: that record was changed, ` +
              "or records were removed, inserted or moved",
        );
      }
    }
    if (record.kind === "segment") {
      const note = segmentNote(record, this.#lineNo);
      if (note === null) return fail("the segment record's fields are malformed");
      this.#segments.push(note);
      if (this.#displaced !== null && record.fields.first_displaced_seq === this.#displaced.seq) {
        this.#displaced = null;
      }
    } else if (record.kind === "records_dropped") {
      const note = droppedNote(record, this.#lineNo);
      if (note === null) return fail("the records_dropped record's fields are malformed");
      this.#dropped.push(note);
    }
    this.#accept(record.seq, bytes);
  }

  #accept(seq: number, bytes: Uint8Array): void {
    this.#expectedSeq = seq + 1;
    this.#prevHash = sha256Hex(bytes);
    this.#lastGoodSeq = seq;
    this.#records += 1;
  }

  #seqProblem(seq: number): string {
    return `seq is ${seq} but ${this.#expectedSeq} was expected: ` +
      (this.#expectedSeq === 1
        ? "the log does not start at the beginning of a chain"
        : "a record was removed, inserted or moved");
  }

  #unclosedDamage(damage: Damage): VerifyReport {
    return {
      ok: false,
      line: damage.firstLine,
      seq: null,
      problem: `the line is not an audit record (${damage.problem}), ` +
        "and no chain_reset record closes it off",
    };
  }
}

const HASH = /^[0-9a-f]{64}$/;

function segmentNote(record: ParsedLine, line: number): SegmentNote | null {
  const { found, previous_seq, previous_sha256, first_displaced_seq } = record.fields;
  if (
    typeof found !== "string" || typeof previous_seq !== "number" ||
    !Number.isSafeInteger(previous_seq) || previous_seq < 0 ||
    typeof previous_sha256 !== "string" || !HASH.test(previous_sha256)
  ) return null;
  return {
    line,
    seq: record.seq,
    found,
    previousSeq: previous_seq,
    previousSha256: previous_sha256,
    firstDisplacedSeq: typeof first_displaced_seq === "number" ? first_displaced_seq : null,
  };
}

function droppedNote(record: ParsedLine, line: number): DroppedNote | null {
  const { count, first_ts, last_ts, writer } = record.fields;
  if (
    typeof count !== "number" || !Number.isSafeInteger(count) || count < 1 ||
    typeof first_ts !== "string" || typeof last_ts !== "string"
  ) return null;
  return {
    line,
    seq: record.seq,
    count,
    firstTs: first_ts,
    lastTs: last_ts,
    writer: typeof writer === "string" ? writer : null,
  };
}

/**
 * Verifies a whole log held in memory.
 *
 * @param input the log's text or bytes (text is hashed as UTF-8; htmcp writes ASCII only)
 * @returns `ok` with the record count, head hash and chain resets, or the first broken link
 * @example
 * ```ts
 * const report = verifyAuditChain(await Deno.readTextFile("audit.jsonl"));
 * if (!report.ok) console.log(`broken at line ${report.line}: ${report.problem}`);
 * ```
 */
export function verifyAuditChain(input: string | Uint8Array): VerifyReport {
  const verifier = new ChainVerifier();
  verifier.push(typeof input === "string" ? new TextEncoder().encode(input) : input);
  return verifier.finish();
}
