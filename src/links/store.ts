/**
 * Download links: records in the state directory (through `RecordStore`,
 * kind `links`, one record per link named by its token's SHA-256) and, beside
 * each, the snapshot it serves (`<link_id>.snapshot`, 0600).
 *
 * Threats and answers:
 * - More downloads than `max_downloads` by racing requests (also from
 *   several servers sharing the state dir): a download is claimed, counted
 *   and written back under the store's cross-process lock, and the last
 *   allowed one opens the snapshot and deletes it and the record before the
 *   lock is released; the bytes are then read from the open descriptor.
 * - A link outliving its time: every lookup checks the clock and deletes an
 *   expired link on sight; `sweep()` deletes the rest (startup, periodically).
 * - Another caller's links: a record of another owner is "not found" for
 *   list and revoke, indistinguishable from none.
 * - Disk filled by snapshots: each caller holds at most
 *   `max_links_per_caller` live links of at most `max_file_bytes` each.
 *
 * @module
 */
import type { LinkSettings } from "../config/types.ts";
import { RecordStore } from "../state/mod.ts";
import { snapshotJailFile, type SnapshotRefusalCode } from "./snapshot.ts";
import { isLinkIdShaped, isTokenShaped, newLinkId, newToken, tokenDigest } from "./token.ts";

const KIND = "links";
/** Temporary snapshots older than this are leftovers of a crash, deleted by the sweep. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/** What is stored of one link (never the token). */
export interface LinkRecord {
  /** The record's name: the SHA-256 of the token, so the store never holds a usable token. */
  readonly link_id: string;
  /** `local` or `client:<id>` (`sessionOwner`). */
  readonly owner: string;
  /** The file's path relative to the jail root. */
  readonly path: string;
  /** SHA-256 (hex) of the snapshot: what a download serves, whatever the file became. */
  readonly sha256: string;
  /** The snapshot's length in bytes. */
  readonly size: number;
  /** Served `inline` (shown by a browser) rather than as an attachment. */
  readonly inline: boolean;
  /** The Content-Type an inline download gets (text/plain or application/octet-stream). */
  readonly inline_type: string;
  /** When it was created (ms since the epoch). */
  readonly created_ms: number;
  /** When it stops working (ms since the epoch). */
  readonly expires_ms: number;
  /** Null: unlimited within the lifetime. */
  readonly max_downloads: number | null;
  /** Downloads so far; the one that reaches `max_downloads` deletes the link. */
  readonly downloads: number;
}

/** What `create_file_link` asks for, after validation against the settings. */
export interface LinkRequest {
  /** The file, as the caller named it (confined to the jail when the snapshot is taken). */
  readonly path: string;
  /** The lifetime in milliseconds, at most the settings' `maxTtlMs`. */
  readonly ttlMs: number;
  /** Downloads allowed, or null for any number within the lifetime. */
  readonly maxDownloads: number | null;
  /** Serve it inline rather than as an attachment. */
  readonly inline: boolean;
}

/** The new link's token (shown once, never stored) and record, or the refusal with its code. */
export type CreateResult =
  | { readonly ok: true; readonly token: string; readonly record: LinkRecord }
  | {
    readonly ok: false;
    readonly code: SnapshotRefusalCode | "LINK_LIMIT_REACHED";
    readonly reason: string;
  };

/** A claimed download: the open snapshot and the record after this download was counted. */
export interface Claimed {
  /** The record with this download counted. */
  readonly record: LinkRecord;
  /** The snapshot, open for reading; the caller serves it and then closes it. */
  readonly file: Deno.FsFile;
}

/** Why a token did not lead to a download (for the audit only; the client sees one 404). */
export type ClaimRefusal = "malformed" | "unknown" | "expired" | "missing_snapshot";

/** The download to serve, or why the token leads to none (with the record, when one exists). */
export type ClaimResult =
  | { readonly ok: true; readonly claimed: Claimed }
  | { readonly ok: false; readonly why: ClaimRefusal; readonly record: LinkRecord | null };

function isLinkRecord(value: unknown): value is LinkRecord {
  if (value === null || typeof value !== "object") return false;
  const r = value as Record<string, unknown>;
  return typeof r["link_id"] === "string" && isLinkIdShaped(r["link_id"]) &&
    typeof r["owner"] === "string" && typeof r["path"] === "string" &&
    typeof r["sha256"] === "string" && typeof r["size"] === "number" &&
    typeof r["inline"] === "boolean" && typeof r["inline_type"] === "string" &&
    typeof r["created_ms"] === "number" && typeof r["expires_ms"] === "number" &&
    (r["max_downloads"] === null || typeof r["max_downloads"] === "number") &&
    typeof r["downloads"] === "number";
}

/** The links of one state directory. */
export class LinkStore {
  readonly #store: RecordStore;
  readonly #folder: string;
  readonly #jailRoot: string;
  readonly #settings: LinkSettings;
  readonly #now: () => number;

  /**
   * Opens nothing: links are read and written in the state directory on each call.
   *
   * @param stateDir The state directory (checked 0700 on first use).
   * @param jailRoot The jail's real path.
   * @param settings The policy's `[links]`.
   * @param now The clock (tests move it).
   */
  constructor(
    stateDir: string,
    jailRoot: string,
    settings: LinkSettings,
    now: () => number = Date.now,
  ) {
    this.#store = new RecordStore(stateDir);
    this.#folder = `${stateDir}/${KIND}`;
    this.#jailRoot = jailRoot;
    this.#settings = settings;
    this.#now = now;
  }

  /** The settings in force (the tools show the limits). */
  get settings(): LinkSettings {
    return this.#settings;
  }

  #snapshotPath(linkId: string): string {
    return `${this.#folder}/${linkId}.snapshot`;
  }

  async #removeLink(digest: string, record: LinkRecord): Promise<void> {
    await this.#store.remove(KIND, digest);
    await Deno.remove(this.#snapshotPath(record.link_id)).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }

  /** Every stored link with its record id; expired ones are deleted and returned apart. Under the lock. */
  async #scan(): Promise<{ live: Map<string, LinkRecord>; ended: LinkRecord[] }> {
    const live = new Map<string, LinkRecord>();
    const ended: LinkRecord[] = [];
    for (const digest of await this.#store.list(KIND)) {
      const record = await this.#store.read(KIND, digest);
      if (!isLinkRecord(record)) continue;
      if (this.#now() >= record.expires_ms) {
        await this.#removeLink(digest, record);
        ended.push(record);
      } else {
        live.set(digest, record);
      }
    }
    return { live, ended };
  }

  /**
   * Snapshots `request.path` and stores a new link for `owner`.
   *
   * The copy is made before the lock is taken (a large file must not hold
   * up every download), into a temporary name the sweep recognises; the
   * per-caller bound is checked and the link made under the lock.
   */
  async create(owner: string, request: LinkRequest): Promise<CreateResult> {
    // Creates and checks the folder (0700 in a 0700 state dir) before the copy lands in it.
    await this.#store.list(KIND);
    const linkId = newLinkId();
    const temp = `${this.#snapshotPath(linkId)}.${crypto.randomUUID()}.tmp`;
    const copied = await snapshotJailFile(
      this.#jailRoot,
      request.path,
      this.#settings.maxFileBytes,
      temp,
    );
    if (!copied.ok) return copied;
    try {
      return await this.#store.withLock(KIND, async (): Promise<CreateResult> => {
        const { live } = await this.#scan();
        const mine = [...live.values()].filter((record) => record.owner === owner).length;
        if (mine >= this.#settings.maxLinksPerCaller) {
          return {
            ok: false,
            code: "LINK_LIMIT_REACHED",
            reason: `This caller already holds ${mine} live link(s), the limit ` +
              "(links.max_links_per_caller); revoke one with revoke_file_link or let one expire.",
          };
        }
        const token = newToken();
        const now = this.#now();
        const record: LinkRecord = {
          link_id: linkId,
          owner,
          path: copied.relative,
          sha256: copied.sha256,
          size: copied.size,
          inline: request.inline,
          // Conservative: text is shown as plain text, everything else is bytes.
          inline_type: copied.text ? "text/plain; charset=utf-8" : "application/octet-stream",
          created_ms: now,
          expires_ms: now + request.ttlMs,
          max_downloads: request.maxDownloads,
          downloads: 0,
        };
        await Deno.rename(temp, this.#snapshotPath(linkId));
        await this.#store.write(KIND, await tokenDigest(token), record);
        return { ok: true, token, record };
      });
    } finally {
      await Deno.remove(temp).catch(() => {});
    }
  }

  /** `owner`'s live links, oldest first. */
  list(owner: string): Promise<LinkRecord[]> {
    return this.#store.withLock(KIND, async () => {
      const { live } = await this.#scan();
      return [...live.values()].filter((record) => record.owner === owner)
        .sort((a, b) => a.created_ms - b.created_ms);
    });
  }

  /** Deletes `owner`'s link `linkId`; null when there is none (or it is another caller's). */
  revoke(owner: string, linkId: string): Promise<LinkRecord | null> {
    if (!isLinkIdShaped(linkId)) return Promise.resolve(null);
    return this.#store.withLock(KIND, async () => {
      const { live } = await this.#scan();
      for (const [digest, record] of live) {
        if (record.link_id === linkId && record.owner === owner) {
          await this.#removeLink(digest, record);
          return record;
        }
      }
      return null;
    });
  }

  /**
   * Claims one download of the link `token` opens: checks shape, lifetime
   * and count, counts it, and opens the snapshot, all under the lock. The
   * last allowed download deletes the link (the open descriptor still reads).
   */
  async claim(token: string): Promise<ClaimResult> {
    if (!isTokenShaped(token)) return { ok: false, why: "malformed", record: null };
    const digest = await tokenDigest(token);
    return await this.#store.withLock(KIND, async (): Promise<ClaimResult> => {
      const record = await this.#store.read(KIND, digest);
      if (!isLinkRecord(record)) return { ok: false, why: "unknown", record: null };
      if (this.#now() >= record.expires_ms) {
        await this.#removeLink(digest, record);
        return { ok: false, why: "expired", record };
      }
      let file: Deno.FsFile;
      try {
        file = await Deno.open(this.#snapshotPath(record.link_id), { read: true });
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        await this.#store.remove(KIND, digest);
        return { ok: false, why: "missing_snapshot", record };
      }
      const counted: LinkRecord = { ...record, downloads: record.downloads + 1 };
      try {
        if (counted.max_downloads !== null && counted.downloads >= counted.max_downloads) {
          await this.#removeLink(digest, record);
        } else {
          await this.#store.write(KIND, digest, counted);
        }
      } catch (error) {
        file.close();
        throw error;
      }
      return { ok: true, claimed: { record: counted, file } };
    });
  }

  /** Deletes the link `token` opens (a snapshot that failed its hash check). */
  async discard(token: string): Promise<void> {
    if (!isTokenShaped(token)) return;
    const digest = await tokenDigest(token);
    await this.#store.withLock(KIND, async () => {
      const record = await this.#store.read(KIND, digest);
      if (isLinkRecord(record)) await this.#removeLink(digest, record);
      else await this.#store.remove(KIND, digest);
    });
  }

  /**
   * Deletes expired links, snapshots no live record names, and temporary
   * copies left by a crash.
   *
   * @returns The links that expired.
   */
  sweep(): Promise<LinkRecord[]> {
    return this.#store.withLock(KIND, async () => {
      const { live, ended } = await this.#scan();
      const kept = new Set([...live.values()].map((record) => record.link_id));
      for await (const entry of Deno.readDir(this.#folder)) {
        if (!entry.isFile) continue;
        const path = `${this.#folder}/${entry.name}`;
        if (entry.name.endsWith(".snapshot")) {
          if (!kept.has(entry.name.slice(0, -".snapshot".length))) await removeQuietly(path);
        } else if (entry.name.endsWith(".tmp") && entry.name.includes(".snapshot.")) {
          const info = await Deno.lstat(path).catch(() => null);
          const age = info?.mtime === null || info === null
            ? 0
            : this.#now() - info.mtime.getTime();
          if (age > STALE_TEMP_MS) await removeQuietly(path);
        }
      }
      return ended;
    });
  }
}

async function removeQuietly(path: string): Promise<void> {
  await Deno.remove(path).catch(() => {});
}
