/**
 * A signed checkpoint of the audit chain: one line in the checkpoint file
 * that says "the log reached record `seq`, whose line hash is `sha256`", with
 * an Ed25519 signature over those words.
 *
 * Threat answered: the hash chain shows an edit or a removal in the middle
 * of the log, but a log whose last records were cut off is still a valid,
 * shorter chain. A checkpoint written while the chain stood at `seq` proves
 * that records up to `seq` existed; if the log now ends before it, exactly
 * `lastSeq + 1 .. seq` are gone. The signature makes a checkpoint that
 * someone wrote to cover a cut (or edited to match one) fail verification,
 * unless that someone holds the private key.
 *
 * The signed bytes are a fixed-order array of the fields, never the JSON
 * line itself, so neither key order nor whitespace matters, and no field can
 * be added to the line and be mistaken for a signed one.
 *
 * @module
 */

import { encodeRecordLine } from "./line.ts";

/** Why a checkpoint was written. */
export type CheckpointReason = "interval" | "rotation" | "shutdown";

const REASONS: ReadonlySet<string> = new Set<CheckpointReason>([
  "interval",
  "rotation",
  "shutdown",
]);

/** The signed fields of a checkpoint, in signing order. */
export interface CheckpointFields {
  /** Format version; 1. */
  readonly v: 1;
  /** `seq` of the chain's last record when the checkpoint was written. */
  readonly seq: number;
  /** SHA-256 (hex) of that record's line: the chain head. */
  readonly sha256: string;
  /** Base name of the log file holding that record (a rotated file's new name). */
  readonly file: string;
  /** When the checkpoint was written (ISO 8601 UTC). */
  readonly ts: string;
  /** Writer id of the `AuditLog` that wrote it (the `writer` of its records). */
  readonly writer: string;
  /** What made the writer sign now: a `seq` interval, a rotation or shutdown. */
  readonly reason: CheckpointReason;
  /** Fingerprint of the signing key (see `keyFingerprint`). */
  readonly key: string;
}

/** A checkpoint with its signature (base64url, 64 bytes). */
export interface Checkpoint extends CheckpointFields {
  /** Ed25519 signature over the fields in signing order, base64url. */
  readonly sig: string;
}

/** A line read as a checkpoint, or why it is not one. */
export type ParseCheckpointResult =
  | { readonly ok: true; readonly checkpoint: Checkpoint }
  | { readonly ok: false; readonly problem: string };

const DOMAIN = "htmcp-audit-checkpoint-v1\n";
const HASH = /^[0-9a-f]{64}$/;
const FINGERPRINT = /^[0-9a-f]{16}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const encoder = new TextEncoder();

/**
 * The bytes a checkpoint's signature covers: a domain string (so the key
 * signs nothing else by accident) and the fields in a fixed order.
 */
export function signedBytes(fields: CheckpointFields): Uint8Array<ArrayBuffer> {
  return encoder.encode(
    DOMAIN + JSON.stringify([
      fields.v,
      fields.seq,
      fields.sha256,
      fields.file,
      fields.ts,
      fields.writer,
      fields.reason,
      fields.key,
    ]),
  );
}

/** The checkpoint as one printable-ASCII JSON line, without the newline. */
export function encodeCheckpointLine(checkpoint: Checkpoint): Uint8Array {
  const { v, seq, sha256, file, ts, writer, reason, key, sig } = checkpoint;
  return encodeRecordLine({
    v,
    kind: "checkpoint",
    seq,
    sha256,
    file,
    ts,
    writer,
    reason,
    key,
    sig,
  });
}

/**
 * Reads one line of a checkpoint file. Text before the first `{` is skipped,
 * so lines copied from stderr or journald (`htmcp: audit checkpoint {...}`)
 * read as they are. Only the shape is checked here; the signature is
 * checked by the verifier, which holds the keys.
 *
 * @param text one line, without its newline
 */
export function parseCheckpointLine(text: string): ParseCheckpointResult {
  const start = text.indexOf("{");
  if (start === -1) return { ok: false, problem: "the line holds no JSON object" };
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start));
  } catch {
    return { ok: false, problem: "the line is not complete JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, problem: "the line is not a JSON object" };
  }
  const fields = value as Record<string, unknown>;
  const { v, kind, seq, sha256, file, ts, writer, reason, key, sig } = fields;
  if (v !== 1 || kind !== "checkpoint") return { ok: false, problem: "it is not a checkpoint" };
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0) {
    return { ok: false, problem: "it has no valid seq" };
  }
  if (typeof sha256 !== "string" || !HASH.test(sha256)) {
    return { ok: false, problem: "it has no valid sha256" };
  }
  if (typeof file !== "string" || typeof writer !== "string") {
    return { ok: false, problem: "it has no valid file or writer" };
  }
  if (typeof ts !== "string" || Number.isNaN(Date.parse(ts))) {
    return { ok: false, problem: "it has no valid ts" };
  }
  if (typeof reason !== "string" || !REASONS.has(reason)) {
    return { ok: false, problem: "it has no valid reason" };
  }
  if (typeof key !== "string" || !FINGERPRINT.test(key)) {
    return { ok: false, problem: "it has no valid key fingerprint" };
  }
  if (typeof sig !== "string" || !BASE64URL.test(sig)) {
    return { ok: false, problem: "it has no valid signature" };
  }
  return {
    ok: true,
    checkpoint: {
      v,
      seq,
      sha256,
      file,
      ts,
      writer,
      reason: reason as CheckpointReason,
      key,
      sig,
    },
  };
}
