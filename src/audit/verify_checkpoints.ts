/**
 * `htmcp audit verify --checkpoints FILE --key KEY LOG...`: the chain check of
 * `verify_file.ts`, then every checkpoint held against the log.
 *
 * Each checkpoint must carry a valid Ed25519 signature by the given public
 * key, or the whole run is refused: a checkpoint file someone could add to
 * or edit proves nothing, so one bad line discredits it (exit 1). Then, for
 * each checkpoint inside the span of the files given, the record with its
 * `seq` must have exactly its hash (else the log was rewritten: exit 1); and
 * when the latest checkpoint names a `seq` beyond the log's last record, the
 * records in between existed and are gone: they are named, and the exit is 1.
 *
 * What this cannot see: records written after the latest checkpoint and
 * then removed (a shutdown checkpoint narrows that window to nothing for a
 * server that stopped cleanly), or a checkpoint file cut short together
 * with the log. SECURITY.md says so.
 *
 * @module
 */

import { type Checkpoint, parseCheckpointLine, signedBytes } from "./checkpoint.ts";
import { readVerifyKey, type VerifyKey } from "./checkpoint_key.ts";
import { decodeBase64Url } from "../encoding/mod.ts";
import { parseRecordLine, sha256Hex } from "./line.ts";
import {
  runAuditVerify,
  VERIFY_BROKEN,
  VERIFY_INTACT_WITH_RESETS,
  VERIFY_UNREADABLE,
} from "./verify_file.ts";

/** What `runCheckpointVerify` checks. */
export interface CheckpointVerifyRequest {
  /** The log, or a rotated series oldest first. */
  readonly logs: readonly string[];
  /** The checkpoint file (or lines copied from stderr/journald). */
  readonly checkpoints: string;
  /** The public key file, as `htmcp audit key` prints it. */
  readonly key: string;
}

const NEWLINE = 0x0a;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type Loaded =
  | { readonly ok: true; readonly checkpoints: readonly Checkpoint[] }
  | { readonly ok: false; readonly code: number };

async function loadCheckpoints(
  path: string,
  key: VerifyKey,
  print: (line: string) => void,
): Promise<Loaded> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    print(`Cannot read the checkpoint file "${path}": ${messageOf(error)}.`);
    return { ok: false, code: VERIFY_UNREADABLE };
  }
  const checkpoints: Checkpoint[] = [];
  const lines = text.split("\n");
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const where = `Checkpoint file "${path}" line ${index + 1}`;
    const parsed = parseCheckpointLine(line);
    if (!parsed.ok) {
      print(`${where} is REFUSED: ${parsed.problem}.`);
      return { ok: false, code: VERIFY_BROKEN };
    }
    const checkpoint = parsed.checkpoint;
    if (checkpoint.key !== key.fingerprint) {
      print(
        `${where} is REFUSED: it names the signing key ${checkpoint.key}, not the given key ${key.fingerprint}.`,
      );
      return { ok: false, code: VERIFY_BROKEN };
    }
    const signature = decodeBase64Url(checkpoint.sig);
    const valid = signature !== null && signature.length === 64 &&
      await crypto.subtle.verify("Ed25519", key.publicKey, signature, signedBytes(checkpoint));
    if (!valid) {
      // An edited field and a signature by another key look the same here.
      print(
        `${where} is REFUSED: its signature does not verify with the given key (forged or edited).`,
      );
      return { ok: false, code: VERIFY_BROKEN };
    }
    checkpoints.push(checkpoint);
  }
  return { ok: true, checkpoints };
}

interface Span {
  firstSeq: number | null;
  lastSeq: number;
  /** Line hash of each record whose `seq` a checkpoint names. */
  readonly hashes: Map<number, string>;
  /**
   * Runs of `seq` the files skip (a `segment` continuing past records that
   * are gone, or files of a series left out), as `[first, last]`.
   */
  readonly gaps: [number, number][];
  /**
   * `segment` records of a writer that found the log cut or replaced and went
   * on from what was left: the old chain's records `seq .. previousSeq` are
   * gone (their `seq`s were given again to new records).
   */
  readonly cuts: { readonly seq: number; readonly previousSeq: number }[];
}

/** Streams the files once, keeping only the hashes the checkpoints ask about. */
async function readSpan(paths: readonly string[], wanted: ReadonlySet<number>): Promise<Span> {
  const span: Span = { firstSeq: null, lastSeq: 0, hashes: new Map(), gaps: [], cuts: [] };
  const take = (line: Uint8Array) => {
    const parsed = parseRecordLine(line);
    // Damaged lines were accepted by the chain check only with their chain_reset.
    if (!parsed.ok) return;
    const seq = parsed.line.seq;
    if (span.firstSeq !== null && seq > span.lastSeq + 1) {
      span.gaps.push([span.lastSeq + 1, seq - 1]);
    }
    span.firstSeq ??= seq;
    const { found, previous_seq: previousSeq } = parsed.line.fields;
    if (
      parsed.line.kind === "segment" && typeof previousSeq === "number" && previousSeq >= seq &&
      (found === "file_truncated" || found === "file_replaced" || found === "file_removed")
    ) {
      span.cuts.push({ seq, previousSeq });
    }
    span.lastSeq = seq;
    if (wanted.has(seq)) span.hashes.set(seq, sha256Hex(line));
  };
  for (const path of paths) {
    const file = await Deno.open(path, { read: true });
    const stream = path.endsWith(".gz")
      ? file.readable.pipeThrough(new DecompressionStream("gzip"))
      : file.readable;
    let carry: Uint8Array = new Uint8Array(0);
    for await (const chunk of stream) {
      let bytes: Uint8Array = chunk;
      if (carry.length > 0) {
        bytes = new Uint8Array(carry.length + chunk.length);
        bytes.set(carry);
        bytes.set(chunk, carry.length);
      }
      let start = 0;
      for (let i = 0; i < bytes.length; i++) {
        if (bytes[i] !== NEWLINE) continue;
        take(bytes.subarray(start, i));
        start = i + 1;
      }
      carry = bytes.slice(start);
    }
    if (carry.length > 0) take(carry);
  }
  return span;
}

/**
 * One checkpoint against the files: null when it holds (or lies beyond
 * their end, judged by the caller from the latest one), "before" when it
 * names a record before the first file given, else the verdict line.
 */
function judgeCheckpoint(checkpoint: Checkpoint, span: Span): string | null | "before" {
  const seq = checkpoint.seq;
  const hash = span.hashes.get(seq);
  const cut = span.cuts.find((c) => c.seq <= seq && seq <= c.previousSeq);
  if (hash !== checkpoint.sha256 && cut !== undefined) {
    // The writer's segment record says which records of the old chain it
    // knew; the checkpoint proves they existed.
    return `Audit log is MISSING ${cut.previousSeq - cut.seq + 1} record(s): seq ${cut.seq} to ` +
      `${cut.previousSeq} of the chain as it was. A writer found the log cut and went on from seq ` +
      `${cut.seq - 1} (its segment record says it knew up to seq ${cut.previousSeq}), and the ` +
      `${describeCheckpoint(checkpoint)} proves seq ${seq} existed.`;
  }
  if (seq > span.lastSeq) return null;
  if (span.firstSeq === null || seq < span.firstSeq) return "before";
  const gap = span.gaps.find(([first, last]) => first <= seq && seq <= last);
  if (hash === undefined && gap !== undefined) {
    return `Audit log is MISSING ${gap[1] - gap[0] + 1} record(s): seq ${gap[0]} to ${gap[1]}. ` +
      `The files skip them, and the ${describeCheckpoint(checkpoint)} proves seq ${seq} existed.`;
  }
  if (hash !== checkpoint.sha256) {
    return `Audit log is BROKEN: record seq ${seq} is not the record the ${
      describeCheckpoint(checkpoint)
    } signed (its hash is ${hash ?? "absent"}): the log was rewritten.`;
  }
  return null;
}

function describeCheckpoint(checkpoint: Checkpoint): string {
  return `checkpoint of ${checkpoint.ts} (${checkpoint.reason}, writer ${checkpoint.writer}, ` +
    `file "${checkpoint.file}", seq ${checkpoint.seq}, sha256 ${checkpoint.sha256})`;
}

/**
 * `htmcp audit verify --checkpoints`: verifies the chain of a log series and
 * checks each signed checkpoint against it, so records cut off the end
 * (which leave a valid, shorter chain) are found and counted.
 *
 * @param request the logs, the checkpoint file and the public key file
 * @param print receives each verdict line (default: stdout)
 * @returns 0 intact and every checkpoint matched; 1 a broken chain, a
 *   refused checkpoint, a rewritten record or missing records; 2 a file
 *   cannot be read; 3 intact with notes (as `runAuditVerify`, or no checkpoint)
 * @example
 * ```ts
 * const code = await runCheckpointVerify({
 *   logs: ["/var/log/htmcp/audit.jsonl"],
 *   checkpoints: "/var/log/htmcp/audit.checkpoints.jsonl",
 *   key: "/root/htmcp-audit-key.json",
 * });
 * ```
 */
export async function runCheckpointVerify(
  request: CheckpointVerifyRequest,
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  let keyText: string;
  try {
    keyText = await Deno.readTextFile(request.key);
  } catch (error) {
    print(`Cannot read the public key "${request.key}": ${messageOf(error)}.`);
    return VERIFY_UNREADABLE;
  }
  const key = await readVerifyKey(keyText);
  if (!key.ok) {
    print(`The public key "${request.key}" cannot be used: ${key.problem}.`);
    return VERIFY_UNREADABLE;
  }
  const chainCode = await runAuditVerify(request.logs, print);
  if (chainCode === VERIFY_BROKEN || chainCode === VERIFY_UNREADABLE) return chainCode;

  const loaded = await loadCheckpoints(request.checkpoints, key.key, print);
  if (!loaded.ok) return loaded.code;
  const checkpoints = loaded.checkpoints;
  if (checkpoints.length === 0) {
    print(
      `Checkpoint file "${request.checkpoints}" holds no checkpoint: nothing shows whether records are missing at the end.`,
    );
    return VERIFY_INTACT_WITH_RESETS;
  }

  const wanted = new Set(checkpoints.map((checkpoint) => checkpoint.seq));
  let span: Span;
  try {
    span = await readSpan(request.logs, wanted);
  } catch (error) {
    print(`Cannot read the audit log again: ${messageOf(error)}.`);
    return VERIFY_UNREADABLE;
  }
  const latest = checkpoints.reduce((a, b) => (b.seq > a.seq ? b : a));
  let before = 0;
  for (const checkpoint of checkpoints) {
    const judged = judgeCheckpoint(checkpoint, span);
    if (judged === "before") before++;
    else if (judged !== null) {
      print(judged);
      return VERIFY_BROKEN;
    }
  }
  if (latest.seq > span.lastSeq) {
    const first = span.lastSeq + 1;
    const count = latest.seq - span.lastSeq;
    print(
      `Audit log is MISSING ${count} record(s) at its end: seq ${first} to ${latest.seq}. ` +
        `The log ends at seq ${span.lastSeq}, but the ${describeCheckpoint(latest)} ` +
        `proves the chain reached seq ${latest.seq}. Records written after that checkpoint cannot be checked.`,
    );
    return VERIFY_BROKEN;
  }
  const skipped = before === 0
    ? ""
    : ` (${before} checkpoint(s) name records before the first file given, not checked)`;
  const after = span.lastSeq - latest.seq;
  print(
    `Checkpoints hold: ${checkpoints.length} signed by key ${key.key.fingerprint}${skipped}; ` +
      `the latest, ${describeCheckpoint(latest)}, matches the log. ` +
      (after === 0
        ? "No record follows it."
        : `${after} record(s) after it (seq ${
          latest.seq + 1
        } to ${span.lastSeq}) are not covered by a checkpoint.`),
  );
  return chainCode;
}
