/**
 * Writes signed checkpoints of the chain head to the checkpoint file (and,
 * when asked, one line on stderr, which journald or a container runtime
 * keeps outside the log's folder).
 *
 * The audit writer calls it while it holds the log's cross-process append
 * lock, right after its own append reached the disk: the head it signs is
 * then the chain's real head (no other writer can append in between), and
 * checkpoint lines of several writers never interleave. "Every N records" is
 * counted on `seq`, not per writer: whichever writer's append crosses a
 * multiple of N writes the checkpoint, so N servers on one log do not write
 * N times as many.
 *
 * A checkpoint that cannot be written is warned about and skipped, never a
 * reason to refuse the call: the records themselves are on disk, and the
 * checkpoint only adds evidence about them.
 *
 * @module
 */

import { encodeBase64Url } from "../encoding/mod.ts";
import {
  type Checkpoint,
  type CheckpointReason,
  encodeCheckpointLine,
  signedBytes,
} from "./checkpoint.ts";
import type { CheckpointKey } from "./checkpoint_key.ts";
import type { ChainHead } from "./examine.ts";
import { openLogFile } from "./open_file.ts";

/** What `AuditLog.open` needs to write checkpoints. */
export interface CheckpointSettings {
  /** The checkpoint file (created 0600, never through a symlink). */
  readonly path: string;
  /** A checkpoint each time `seq` passes a multiple of this; 0: only at rotation and shutdown. */
  readonly every: number;
  /** The signing key from the state directory (`loadOrCreateCheckpointKey`). */
  readonly key: CheckpointKey;
  /** Also print each checkpoint as one line on stderr. */
  readonly stderr: boolean;
  /** Receives the stderr line (default: `console.error`); for tests. */
  readonly print?: (line: string) => void;
}

const NEWLINE = new Uint8Array([0x0a]);

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Signs and appends checkpoints. One per `AuditLog`. */
export class CheckpointWriter {
  readonly #settings: CheckpointSettings;
  readonly #warn: (line: string) => void;

  /**
   * @param settings where, how often, with which key
   * @param warn receives a warning line when a checkpoint cannot be written
   */
  constructor(settings: CheckpointSettings, warn: (line: string) => void) {
    if (!Number.isSafeInteger(settings.every) || settings.every < 0) {
      throw new RangeError(
        `Checkpoint interval must be a non-negative integer, not ${settings.every}.`,
      );
    }
    this.#settings = settings;
    this.#warn = warn;
  }

  /** True when an append that moved the chain from `before` to `after` crosses a multiple of N. */
  isDue(before: number, after: number): boolean {
    const every = this.#settings.every;
    return every > 0 && Math.floor(before / every) < Math.floor(after / every);
  }

  /**
   * Signs `head` and appends it (write, fdatasync). Call only under the log's
   * append lock.
   *
   * @param head the chain head just written or found
   * @param file base name of the file holding that record
   * @param writer the writing log's id
   * @param reason why now
   * @returns true when the checkpoint reached the disk
   */
  async write(
    head: ChainHead,
    file: string,
    writer: string,
    reason: CheckpointReason,
  ): Promise<boolean> {
    const { key, path } = this.#settings;
    const fields = {
      v: 1,
      seq: head.seq,
      sha256: head.hash,
      file,
      ts: new Date().toISOString(),
      writer,
      reason,
      key: key.fingerprint,
    } as const;
    let checkpoint: Checkpoint;
    try {
      const signature = await crypto.subtle.sign("Ed25519", key.privateKey, signedBytes(fields));
      checkpoint = { ...fields, sig: encodeBase64Url(new Uint8Array(signature)) };
    } catch (error) {
      this.#warn(`htmcp: warning: cannot sign an audit checkpoint: ${messageOf(error)}.`);
      return false;
    }
    const line = encodeCheckpointLine(checkpoint);
    if (this.#settings.stderr) {
      const print = this.#settings.print ?? ((text: string) => console.error(text));
      print(`htmcp: audit checkpoint ${new TextDecoder().decode(line)}`);
    }
    const opened = await openLogFile(path);
    if (!opened.ok) {
      this.#warn(`htmcp: warning: audit checkpoint not written: ${opened.reason}`);
      return false;
    }
    const handle = opened.log.file;
    try {
      const bytes = new Uint8Array(line.length + 1);
      bytes.set(line);
      bytes.set(NEWLINE, line.length);
      let written = 0;
      while (written < bytes.length) written += await handle.write(bytes.subarray(written));
      await handle.syncData();
      return true;
    } catch (error) {
      this.#warn(
        `htmcp: warning: audit checkpoint not written to "${path}": ${messageOf(error)}.`,
      );
      return false;
    } finally {
      handle.close();
    }
  }
}
