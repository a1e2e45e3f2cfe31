/**
 * Links a batch of record bodies onto the end of the chain: assigns each its
 * `seq`, `ts` and `prev`, and returns the exact bytes to append. Pure, so the
 * writer's only effectful steps are the write and the flush.
 *
 * @module
 */

import { buildChainReset, type RecordBody } from "./build.ts";
import { concatBytes, encodeRecordLine, sha256Hex } from "./line.ts";
import { GENESIS_HASH } from "./records.ts";
import type { ChainTail } from "./tail.ts";

const NEWLINE = new Uint8Array([0x0a]);

/** What to append, and where the chain stands once it is on disk. */
export interface LinkedBatch {
  /** Complete lines, each ending in a newline (preceded by one newline closing damage, if any). */
  readonly bytes: Uint8Array;
  /** `seq` of each body, in order. */
  readonly seqs: readonly number[];
  /** How many records the bytes hold (the log's own included). */
  readonly count: number;
  /** The chain's end after these bytes. */
  readonly tail: ChainTail;
}

/** Who writes the batch and the log's own records that go before the callers'. */
export interface BatchContext {
  /** The writer id stamped on every record. */
  readonly writer: string;
  /** The policy identity stamped after `writer`; null or absent leaves the field out. */
  readonly policyHash?: string | null;
  /** The time stamped on every record of the batch. */
  readonly ts: string;
  /** The log's own records (`segment`, `records_dropped`), written first. */
  readonly lead: readonly RecordBody[];
}

/**
 * @param tail where the chain stands; its damage, if any, is closed off first
 *   with a `chain_reset` record whose `prev` is the damaged bytes' SHA-256
 * @param bodies the callers' records to append, in order
 * @param context writer id, time stamp and the log's own leading records
 * @returns the bytes, the callers' `seq`s and the new chain end
 */
export function linkBatch(
  tail: ChainTail,
  bodies: readonly RecordBody[],
  context: BatchContext,
): LinkedBatch {
  const { writer, ts, policyHash } = context;
  const parts: Uint8Array[] = [];
  let seq = tail.lastSeq;
  let prev = tail.lastHash;
  const append = (body: RecordBody, linkTo: string) => {
    seq += 1;
    const line = encodeRecordLine({
      seq,
      ts,
      prev: linkTo,
      kind: body.kind,
      writer,
      ...(policyHash === null || policyHash === undefined ? {} : { policy_hash: policyHash }),
      ...body.fields,
    });
    parts.push(line, NEWLINE);
    prev = sha256Hex(line);
  };
  if (tail.damage !== null) {
    if (tail.damage.unterminated) parts.push(NEWLINE);
    append(
      buildChainReset({
        cause: "incomplete_line",
        damaged_bytes: tail.damage.bytes,
        last_good_seq: tail.lastSeq === 0 ? null : tail.lastSeq,
        last_good_sha256: tail.lastSeq === 0 ? GENESIS_HASH : tail.lastHash,
      }),
      tail.damage.sha256,
    );
  }
  for (const body of context.lead) append(body, prev);
  const seqs: number[] = [];
  for (const body of bodies) {
    append(body, prev);
    seqs.push(seq);
  }
  const bytes = concatBytes(parts);
  return {
    bytes,
    seqs,
    count: seq - tail.lastSeq,
    tail: { lastSeq: seq, lastHash: prev, damage: null, size: tail.size + bytes.length },
  };
}
