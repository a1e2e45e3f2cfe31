/**
 * The local backend of `StateStore`: `RecordStore`'s files in the state
 * directory, shared by the processes of one machine through `flock`.
 *
 * A record's version is the SHA-256 of its stored JSON: the file format stays
 * `RecordStore`'s, so records written before this interface existed (and
 * records written through `RecordStore` directly) are read as they are. A
 * record changed and changed back has its old version again; callers that
 * race on a record only ever move it forward (running -> ended, unused ->
 * used), where that cannot matter.
 *
 * Change notification polls: every `pollMs` the kind's folder is listed and
 * each record's size and mtime compared. That is one `readDir` plus one
 * `stat` per record per interval, for the few kinds anyone watches.
 *
 * @module
 */
import { RecordStore } from "./record_store.ts";
import { requireName, requireObject } from "./_names.ts";
import type {
  ChangeListener,
  StateStore,
  UpdateDecision,
  VersionedRecord,
  Watch,
} from "./store.ts";
import { after, type Timer } from "../timers/mod.ts";
import { ensureStateDir } from "./state_dir.ts";

const encoder = new TextEncoder();

/** How often a watch looks at the folder, by default. */
export const LOCAL_POLL_MS = 250;

async function versionOf(value: unknown): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(JSON.stringify(value)));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `StateStore` over the state directory. */
export class LocalStateStore implements StateStore {
  /** Always `"local"`. */
  readonly backend = "local" as const;
  readonly #root: string;
  readonly #records: RecordStore;
  readonly #pollMs: number;
  readonly #watches = new Set<() => void>();

  /**
   * A store over the state directory's record files.
   *
   * @param root The state directory (absolute; created 0700 or checked on first use).
   * @param options `pollMs`: how often a watch polls.
   */
  constructor(root: string, options: { readonly pollMs?: number } = {}) {
    this.#root = root;
    this.#records = new RecordStore(root);
    this.#pollMs = options.pollMs ?? LOCAL_POLL_MS;
  }

  withLock<T>(kind: string, fn: () => Promise<T>): Promise<T> {
    return this.#records.withLock(kind, fn);
  }

  read(kind: string, id: string): Promise<unknown> {
    return this.#records.read(kind, id);
  }

  write(kind: string, id: string, record: unknown): Promise<void> {
    return this.#records.write(kind, id, record);
  }

  remove(kind: string, id: string): Promise<void> {
    return this.#records.remove(kind, id);
  }

  list(kind: string): Promise<string[]> {
    return this.#records.list(kind);
  }

  async readAll(kind: string): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    for (const id of await this.#records.list(kind)) {
      const value = await this.#records.read(kind, id);
      // Removed between the listing and the read: it is simply gone.
      if (value !== null) out.set(id, value);
    }
    return out;
  }

  async get(kind: string, id: string): Promise<VersionedRecord | null> {
    const value = await this.#records.read(kind, id);
    if (value === null) return null;
    return { value, version: await versionOf(value) };
  }

  async compareAndSwap(
    kind: string,
    id: string,
    expected: string | null,
    next: Record<string, unknown> | null,
  ): Promise<boolean> {
    requireName("id", id);
    if (next !== null) requireObject(next);
    return await this.#records.withLock(kind, async () => {
      // Read again under the lock: the version the caller saw may be stale.
      const current = await this.get(kind, id);
      const actual = current === null ? null : current.version;
      if (actual !== expected) return false;
      if (next === null) await this.#records.remove(kind, id);
      else await this.#records.write(kind, id, next);
      return true;
    });
  }

  async update<T>(
    kind: string,
    id: string,
    decide: (current: unknown) => UpdateDecision<T>,
  ): Promise<T> {
    requireName("id", id);
    return await this.#records.withLock(kind, async () => {
      const decision = decide(await this.#records.read(kind, id));
      if (decision.next === null) await this.#records.remove(kind, id);
      else if (decision.next !== undefined) {
        await this.#records.write(kind, id, requireObject(decision.next));
      }
      return decision.result;
    });
  }

  async watch(kind: string, listener: ChangeListener): Promise<Watch> {
    const folder = `${this.#root}/${requireName("kind", kind)}`;
    // Creates the folder (0700, root checked) so the first poll has something to list.
    await this.#records.list(kind);
    let seen = await snapshot(folder);
    let stopped = false;
    let timer: Timer | undefined;
    const tick = async () => {
      if (stopped) return;
      try {
        const now = await snapshot(folder);
        for (const [id, key] of now) if (seen.get(id) !== key) listener(id);
        for (const id of seen.keys()) if (!now.has(id)) listener(id);
        seen = now;
      } catch {
        // The folder vanished or became unreadable: say "re-read", keep polling.
        listener(null);
      }
      if (!stopped) timer = after(this.#pollMs, tick);
    };
    timer = after(this.#pollMs, tick);
    const stop = () => {
      stopped = true;
      timer?.cancel();
    };
    this.#watches.add(stop);
    return {
      close: () => {
        stop();
        this.#watches.delete(stop);
        return Promise.resolve();
      },
    };
  }

  async ping(): Promise<boolean> {
    const checked = await ensureStateDir(this.#root);
    if (!checked.ok) return false;
    try {
      // Writable, not just present: a record could not be saved otherwise.
      const probe = `${this.#root}/.ready-${crypto.randomUUID()}`;
      await Deno.writeFile(probe, new Uint8Array(), { createNew: true, mode: 0o600 });
      await Deno.remove(probe);
      return true;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    for (const stop of this.#watches) stop();
    this.#watches.clear();
    return Promise.resolve();
  }
}

/** id -> "size:mtime" of every record file in `folder`. */
async function snapshot(folder: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const entry of Deno.readDir(folder)) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const id = entry.name.slice(0, -".json".length);
    try {
      const info = await Deno.stat(`${folder}/${entry.name}`);
      out.set(id, `${info.size}:${info.mtime?.getTime()}:${info.ino}`);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return out;
}
