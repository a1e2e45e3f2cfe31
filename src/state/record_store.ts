/**
 * A small durable store of JSON records keyed by kind and id, shared by every
 * server process that uses the same state directory (sessions now; jobs and
 * approvals can use it the same way).
 *
 * Threats and answers:
 * - Another local user reading or planting records: the folder is 0700 and
 *   every file 0600 (the state directory itself is checked at startup).
 * - A reader seeing half a record after a crash or a concurrent write: each
 *   record is written to a temporary file, fsynced, then renamed over the
 *   old one, so a reader sees the old record or the new one, never a mix.
 * - Two servers updating the same kind at once (a lost update, or a count
 *   limit both think they are under): `withLock` holds an exclusive
 *   `flock` on the kind's lock file across read-check-write.
 * - A crafted id walking out of the folder (`../x`): ids and kinds are
 *   restricted to `[A-Za-z0-9_-]`, so they are always one file name.
 *
 * @module
 */

import { ensureStateDir } from "./state_dir.ts";

import { isRecordName, requireName } from "./_names.ts";

export { isRecordName };

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** JSON records under `<root>/<kind>/<id>.json`. */
export class RecordStore {
  readonly #root: string;
  #rootChecked = false;

  /**
   * Opens the store over a state directory.
   *
   * @param root The state directory (absolute); created 0700 or checked on first use.
   */
  constructor(root: string) {
    this.#root = root;
  }

  async #folder(kind: string): Promise<string> {
    if (!this.#rootChecked) {
      // Fail closed: records in a folder others may write could be planted.
      const checked = await ensureStateDir(this.#root);
      if (!checked.ok) throw new Error(checked.message);
      this.#rootChecked = true;
    }
    const folder = `${this.#root}/${requireName("kind", kind)}`;
    await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
    return folder;
  }

  /**
   * Runs `fn` holding the kind's exclusive cross-process lock. Every change
   * that depends on what is stored (a count, an owner) must happen inside.
   */
  async withLock<T>(kind: string, fn: () => Promise<T>): Promise<T> {
    const folder = await this.#folder(kind);
    const lock = await Deno.open(`${folder}/.lock`, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      await lock.lock(true);
      return await fn();
    } finally {
      // Closing the descriptor releases the flock even if unlock throws.
      lock.close();
    }
  }

  /** The record, or null when there is none (or it is not valid JSON: treated as absent). */
  async read(kind: string, id: string): Promise<unknown> {
    const folder = await this.#folder(kind);
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(`${folder}/${requireName("id", id)}.json`);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
    try {
      return JSON.parse(decoder.decode(bytes));
    } catch {
      return null;
    }
  }

  /** Replaces the record atomically: temporary file, fsync, rename. */
  async write(kind: string, id: string, record: unknown): Promise<void> {
    const folder = await this.#folder(kind);
    const target = `${folder}/${requireName("id", id)}.json`;
    const temp = `${target}.${crypto.randomUUID()}.tmp`;
    const file = await Deno.open(temp, { write: true, createNew: true, mode: 0o600 });
    try {
      const bytes = encoder.encode(JSON.stringify(record));
      let written = 0;
      while (written < bytes.byteLength) written += await file.write(bytes.subarray(written));
      await file.sync();
    } catch (error) {
      file.close();
      await Deno.remove(temp).catch(() => {});
      throw error;
    }
    file.close();
    await Deno.rename(temp, target);
  }

  /** Deletes the record; a missing one is not an error. */
  async remove(kind: string, id: string): Promise<void> {
    const folder = await this.#folder(kind);
    try {
      await Deno.remove(`${folder}/${requireName("id", id)}.json`);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }

  /** Every record id of `kind`, unsorted. */
  async list(kind: string): Promise<string[]> {
    const folder = await this.#folder(kind);
    const ids: string[] = [];
    for await (const entry of Deno.readDir(folder)) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      const id = entry.name.slice(0, -".json".length);
      if (isRecordName(id)) ids.push(id);
    }
    return ids;
  }
}
