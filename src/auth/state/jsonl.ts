/**
 * Append-only JSON Lines files for the state that several processes share
 * (the server approving a client, the operator's CLI revoking one). Each
 * change is one small `O_APPEND` write followed by fsync, so two writers never
 * lose each other's update the way read-modify-write of one JSON file would.
 *
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Appends one record as a line and fsyncs it before resolving. */
export async function appendRecord(path: string, record: unknown): Promise<void> {
  const bytes = encoder.encode(JSON.stringify(record) + "\n");
  const file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
  try {
    let written = 0;
    while (written < bytes.byteLength) written += await file.write(bytes.subarray(written));
    await file.sync();
  } finally {
    file.close();
  }
}

/** What one read of a JSON Lines file produced. */
export interface JsonlSnapshot {
  /** Parsed complete lines, in file order. */
  readonly records: readonly unknown[];
  /** Complete lines that were not JSON. */
  readonly badLines: number;
  /** False when the last line had no newline yet (a write in progress or a crash). */
  readonly complete: boolean;
}

/** Reads every complete line; a missing file is empty. */
export async function readRecords(path: string): Promise<JsonlSnapshot> {
  let text: string;
  try {
    text = decoder.decode(await Deno.readFile(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { records: [], badLines: 0, complete: true };
    throw error;
  }
  const lines = text.split("\n");
  const tail = lines.pop() ?? "";
  const records: unknown[] = [];
  let badLines = 0;
  for (const line of lines) {
    if (line.trim() === "") continue;
    try {
      records.push(JSON.parse(line));
    } catch {
      badLines++;
    }
  }
  return { records, badLines, complete: tail === "" };
}

/**
 * Caches a derived view of a JSON Lines file and rebuilds it only when the
 * file changes. One `stat` per check is the whole cost, so callers may check
 * on every request and a change made by another process is seen at once.
 */
export class WatchedJsonl<T> {
  readonly #path: string;
  readonly #build: (snapshot: JsonlSnapshot) => T;
  #key: string | null = null;
  #value: T;

  /**
   * @param path The file.
   * @param build Turns a snapshot into the view (pure).
   */
  constructor(path: string, build: (snapshot: JsonlSnapshot) => T) {
    this.#path = path;
    this.#build = build;
    this.#value = build({ records: [], badLines: 0, complete: true });
  }

  /**
   * The current view. Throws when the file exists but cannot be read: callers
   * holding security state must fail closed on that.
   */
  async current(): Promise<T> {
    let key: string;
    try {
      const info = await Deno.stat(this.#path);
      key = `${info.ino}:${info.size}:${info.mtime?.getTime()}`;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      key = "missing";
    }
    if (key !== this.#key) {
      const snapshot = await readRecords(this.#path);
      this.#value = this.#build(snapshot);
      // An unfinished last line is re-read next time rather than cached as absent.
      this.#key = snapshot.complete ? key : null;
    }
    return this.#value;
  }
}
