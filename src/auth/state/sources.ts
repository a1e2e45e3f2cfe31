/**
 * Where the approved clients and the revocation list are kept: the two JSON
 * Lines files of the state directory (one host), or records in the shared
 * `StateStore` (a fleet on PostgreSQL). `ClientRegistry` reads and appends
 * through either the same way.
 *
 * In the store, a client's approval is a record keyed by the SHA-256 of its
 * id (ids may be https URLs, record ids are plain names), created only when
 * absent, so the first approval wins as in the file. Each revocation is one
 * record (`c-<hash>` for a client, `t-<hash>` for a token), holding the same
 * line the file would.
 *
 * Revocations must be in force on every replica within one second. The
 * store source caches its view for at most `REVOCATION_MAX_AGE_MS` and drops
 * it as soon as the store says a revocation record changed (PostgreSQL
 * LISTEN/NOTIFY), so normally a revocation applies on the next request
 * anywhere, and at worst one second later if a notification was lost.
 *
 * @module
 */
import { join } from "../../path/mod.ts";
import type { StateStore, Watch } from "../../state/mod.ts";
import { appendRecord, WatchedJsonl } from "./jsonl.ts";
import { approvalLine, buildClientMap, type ClientRecord, CLIENTS_FILE } from "./clients.ts";
import { buildRevocationView, REVOCATIONS_FILE, type RevocationView } from "./revocations.ts";

/** The longest a replica may act on a revocation list it has not re-read. */
export const REVOCATION_MAX_AGE_MS = 1_000;

const CLIENTS_KIND = "oauth_clients";
const REVOCATIONS_KIND = "oauth_revocations";

export type ClientMap = ReturnType<typeof buildClientMap>;

/** The storage under a `ClientRegistry`. */
export interface RegistrySource {
  /** The approvals (may be cached; fresh enough for a request). */
  clients(): Promise<ClientMap>;
  /**
   * The revocation list; the same object until it changes. Throws when it
   * cannot be read: callers fail closed.
   */
  revocations(): Promise<RevocationView>;
  /** Persists an approval (the first one of an id wins). */
  addApproval(client: ClientRecord): Promise<void>;
  /** Persists one revocation line (`clientRevocationLine` / `tokenRevocationLine`). */
  addRevocation(line: { readonly kind: string } & Record<string, unknown>): Promise<void>;
}

/** The two files of a state directory. */
export function fileSource(stateDir: string): RegistrySource {
  const clientsPath = join(stateDir, CLIENTS_FILE);
  const revocationsPath = join(stateDir, REVOCATIONS_FILE);
  const clients = new WatchedJsonl(clientsPath, (s) => buildClientMap(s.records));
  const revocations = new WatchedJsonl(
    revocationsPath,
    (s) => buildRevocationView(s.records, s.badLines),
  );
  return {
    clients: () => clients.current(),
    revocations: () => revocations.current(),
    addApproval: (client) => appendRecord(clientsPath, approvalLine(client)),
    addRevocation: (line) => appendRecord(revocationsPath, line),
  };
}

async function hashId(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return btoa(String.fromCharCode(...digest)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}

/**
 * A view built from all records of one kind, reused until the store reports
 * a change to that kind or `REVOCATION_MAX_AGE_MS` passes; concurrent
 * readers share one read. A failed read is thrown (and retried next time).
 */
function cachedKind<T>(
  store: StateStore,
  kind: string,
  build: (records: Map<string, unknown>) => T,
  now: () => number,
): { current(): Promise<T>; invalidate(): void } {
  let view: { value: T } | null = null;
  let readAt = 0;
  let dirty = true;
  let reading: Promise<T> | null = null;
  let watch: Promise<Watch> | null = null;
  const read = async (): Promise<T> => {
    // Watching first: a change made while we read marks the view dirty again.
    watch ??= store.watch(kind, () => {
      dirty = true;
    });
    await watch;
    dirty = false;
    const at = now();
    try {
      const value = build(await store.readAll(kind));
      view = { value };
      readAt = at;
      return value;
    } catch (error) {
      dirty = true;
      throw error;
    }
  };
  return {
    current() {
      if (view !== null && !dirty && now() - readAt < REVOCATION_MAX_AGE_MS) {
        return Promise.resolve(view.value);
      }
      reading ??= read().finally(() => {
        reading = null;
      });
      return reading;
    },
    invalidate() {
      dirty = true;
    },
  };
}

/** Records in a shared store, each view cached for at most one second. */
export function storeSource(
  store: StateStore,
  now: () => number = Date.now,
): RegistrySource {
  const clients = cachedKind(store, CLIENTS_KIND, (records) =>
    // Approval order, as the file has it.
    buildClientMap([...records.values()].sort((x, y) => approvedAt(x) - approvedAt(y))), now);
  const revocations = cachedKind(
    store,
    REVOCATIONS_KIND,
    (records) => buildRevocationView([...records.values()], 0),
    now,
  );
  return {
    clients: () => clients.current(),
    revocations: () => revocations.current(),
    async addApproval(client) {
      const id = await hashId(client.client_id);
      await store.compareAndSwap(
        CLIENTS_KIND,
        id,
        null,
        approvalLine(client) as Record<string, unknown>,
      );
      clients.invalidate();
    },
    async addRevocation(line) {
      const subject = line.kind === "client" ? line.client_id : line.jti;
      const id = `${line.kind === "client" ? "c" : "t"}-${await hashId(String(subject))}`;
      // A client revoked twice keeps its first time, as in the file.
      await store.compareAndSwap(REVOCATIONS_KIND, id, null, line);
      revocations.invalidate();
    },
  };
}

function approvedAt(line: unknown): number {
  const client = (line as { client?: { approved_at?: unknown } } | null)?.client;
  return typeof client?.approved_at === "number" ? client.approved_at : 0;
}
