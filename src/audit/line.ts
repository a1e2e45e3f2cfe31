/**
 * One audit line: how a record becomes bytes, how bytes are hashed, and how a
 * line is recognised as a record when read back.
 *
 * Lines are printable ASCII only (0x20-0x7e): every other UTF-16 unit is
 * written as a JSON `\uXXXX` escape. So a command carrying terminal escapes or
 * bidirectional-override characters cannot disguise the log on an operator's
 * screen, the bytes survive any text decoding unchanged (the hash chain is
 * over bytes), and a byte outside that range proves the line was not written
 * by htmcp.
 *
 * @module
 */

import type { AuditRecordKind } from "./records.ts";

const RECORD_KINDS: ReadonlySet<string> = new Set<AuditRecordKind>([
  "attempt",
  "outcome",
  "explain",
  "event",
  "chain_reset",
  "segment",
  "records_dropped",
]);

const HASH_PATTERN = /^[0-9a-f]{64}$/;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The parts joined into one new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** SHA-256 of `bytes` as lower-case hex (a line's hash, the next line's `prev`). */
export { sha256Hex } from "./sha256.ts";

/**
 * Serialises a record as one printable-ASCII JSON line, without the newline.
 *
 * @param record a plain object whose key order is the line's key order
 * @returns the line's bytes
 */
export function encodeRecordLine(record: Readonly<Record<string, unknown>>): Uint8Array {
  const json = JSON.stringify(record).replace(
    /[^\x20-\x7e]/g,
    (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return encoder.encode(json);
}

/** The envelope of a line recognised as a record, with the whole parsed object. */
export interface ParsedLine {
  readonly seq: number;
  readonly ts: string;
  readonly prev: string;
  readonly kind: AuditRecordKind;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** A line that is a record, or the sentence saying why not. */
export type ParseLineResult =
  | { readonly ok: true; readonly line: ParsedLine }
  | { readonly ok: false; readonly problem: string };

/**
 * Recognises one line (without its newline) as an audit record.
 *
 * @param bytes the line's bytes
 * @returns the envelope, or why the bytes are not a record htmcp wrote
 */
export function parseRecordLine(bytes: Uint8Array): ParseLineResult {
  if (bytes.length === 0) return { ok: false, problem: "the line is empty" };
  for (const byte of bytes) {
    if (byte < 0x20 || byte > 0x7e) {
      return {
        ok: false,
        problem: `the line contains byte 0x${
          byte.toString(16).padStart(2, "0")
        }, which htmcp never writes`,
      };
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    return { ok: false, problem: "the line is not complete JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, problem: "the line is not a JSON object" };
  }
  const fields = value as Record<string, unknown>;
  const { seq, ts, prev, kind } = fields;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) {
    return { ok: false, problem: "the record has no valid seq" };
  }
  if (typeof ts !== "string" || Number.isNaN(Date.parse(ts))) {
    return { ok: false, problem: "the record has no valid ts" };
  }
  if (typeof prev !== "string" || !HASH_PATTERN.test(prev)) {
    return { ok: false, problem: "the record has no valid prev hash" };
  }
  if (typeof kind !== "string" || !RECORD_KINDS.has(kind)) {
    return { ok: false, problem: `the record kind ${JSON.stringify(kind)} is unknown` };
  }
  return { ok: true, line: { seq, ts, prev, kind: kind as AuditRecordKind, fields } };
}
