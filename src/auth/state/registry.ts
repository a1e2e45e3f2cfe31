/**
 * Approved clients and revocations together: the view both the server and
 * the operator CLI read, always fresh from `state_dir` (one `stat` per file
 * per check), so a revocation by another process takes effect on the next
 * request; or from the shared state store, where a revocation made by any
 * replica or the CLI is in force everywhere within one second.
 *
 * @module
 */
import type { StateStore } from "../../state/mod.ts";
import type { ClientRecord } from "./clients.ts";
import { clientRevocationLine, type RevocationView, tokenRevocationLine } from "./revocations.ts";
import { fileSource, type RegistrySource, storeSource } from "./sources.ts";

/** Approved clients as the CLI lists them. */
export interface ApprovedClients {
  /** Approved and not revoked, by id, in approval order. */
  readonly clients: ReadonlyMap<string, ClientRecord>;
  /** Lines of the clients file that could not be read. */
  readonly skippedLines: number;
}

/**
 * What revoking a client did: the record revoked, or the sentence why nothing
 * was (no approved client has that id).
 */
export type RevokeClientResult =
  | { readonly ok: true; readonly client: ClientRecord }
  | { readonly ok: false; readonly message: string };

/** Reads and appends the shared OAuth state: a state directory's files, or a shared store. */
export class ClientRegistry {
  readonly #source: RegistrySource;
  /**
   * Token revocations made by this process, effective even if the append to
   * the shared file failed (disk full): a replayed code must kill its token.
   */
  readonly #localTokenRevocations = new Map<string, number>();
  readonly #onClientRevoked: ((clientId: string) => Promise<unknown>) | null;
  /** The view last seen, to tell which client revocations are new; null before the first read. */
  #seen: RevocationView | null = null;

  /**
   * Opens nothing yet: every read goes to the source afresh.
   *
   * @param source The state directory (need not exist for reading), or a
   *   shared state store (the PostgreSQL backend).
   * @param onClientRevoked Called once for each client revocation that appears
   *   after the first read (another process, the CLI, added it): the server
   *   audits it, because the running server holds the audit log's lock.
   */
  constructor(
    source: string | StateStore,
    onClientRevoked: ((clientId: string) => Promise<unknown>) | null = null,
  ) {
    this.#onClientRevoked = onClientRevoked;
    this.#source = typeof source === "string" ? fileSource(source) : storeSource(source);
  }

  /** The revocation list (throws when it exists but cannot be read: fail closed). */
  async revocations(): Promise<RevocationView> {
    const view = await this.#source.revocations();
    const seen = this.#seen;
    if (view !== seen) {
      this.#seen = view;
      if (seen !== null && this.#onClientRevoked !== null) {
        for (const clientId of view.clients.keys()) {
          if (!seen.clients.has(clientId)) await this.#onClientRevoked(clientId);
        }
      }
    }
    return view;
  }

  /** True when `jti` was revoked by this process or in the shared list. */
  isTokenRevokedLocally(jti: string): boolean {
    return this.#localTokenRevocations.has(jti);
  }

  /** Approved clients minus revoked ones. */
  async approvedClients(): Promise<ApprovedClients> {
    const { clients, skipped } = await this.#source.clients();
    const revoked = (await this.revocations()).clients;
    const live = new Map<string, ClientRecord>();
    for (const [id, client] of clients) if (!revoked.has(id)) live.set(id, client);
    return { clients: live, skippedLines: skipped };
  }

  /** The approved, unrevoked client with this id, or null. */
  async findApproved(clientId: string): Promise<ClientRecord | null> {
    return (await this.approvedClients()).clients.get(clientId) ?? null;
  }

  /** True when the operator revoked this client id. */
  async isClientRevoked(clientId: string): Promise<boolean> {
    return (await this.revocations()).clients.has(clientId);
  }

  /** Persists a client at its first approval. */
  async recordApproval(client: ClientRecord): Promise<void> {
    await this.#source.addApproval(client);
  }

  /**
   * Revokes an approved client: it disappears from the list and every token
   * it holds fails the bearer check from the next request on.
   */
  async revokeClient(clientId: string, nowSeconds: number): Promise<RevokeClientResult> {
    const client = await this.findApproved(clientId);
    if (client === null) {
      return { ok: false, message: `There is no approved OAuth client "${clientId}".` };
    }
    await this.#source.addRevocation(clientRevocationLine(clientId, nowSeconds));
    return { ok: true, client };
  }

  /** Revokes access tokens by id (their `exp` lets readers forget them later). */
  async revokeTokens(
    tokens: readonly { jti: string; exp: number }[],
    nowSeconds: number,
  ): Promise<void> {
    for (const { jti, exp } of tokens) this.#localTokenRevocations.set(jti, exp);
    for (const { jti, exp } of tokens) {
      await this.#source.addRevocation(tokenRevocationLine(jti, exp, nowSeconds));
    }
  }
}
