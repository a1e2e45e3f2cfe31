/**
 * Approved clients, `state_dir/oauth-clients.jsonl`: one `approve` line per
 * client, written the first time the operator approves it (registrations that
 * were never approved live only in memory and vanish with their TTL).
 *
 * @module
 */

/** File name inside the state directory. */
export const CLIENTS_FILE = "oauth-clients.jsonl";

/** An approved public client, as persisted. Field names follow RFC 7591. */
export interface ClientRecord {
  /** The id the server issued at registration; tokens carry it as `client_id`. */
  readonly client_id: string;
  /** The name the client gave itself (shown to the operator, never trusted), or null. */
  readonly client_name: string | null;
  /** The exact redirect URIs registered; an authorization request must name one of them. */
  readonly redirect_uris: readonly string[];
  /** The scopes the client registered for, space-separated. */
  readonly scope: string;
  /** Seconds since the epoch. */
  readonly client_id_issued_at: number;
  /** Seconds since the epoch of the first approval. */
  readonly approved_at: number;
}

/** The line written for an approval. */
export function approvalLine(client: ClientRecord): unknown {
  return { op: "approve", client };
}

/**
 * Reads an `approve` line back, or null when the line is not one (a line
 * written by a newer version, or damaged): it is skipped, never half-used.
 */
export function parseApprovalLine(line: unknown): ClientRecord | null {
  if (!isObject(line) || line.op !== "approve" || !isObject(line.client)) return null;
  const c = line.client;
  if (
    typeof c.client_id !== "string" || c.client_id === "" ||
    !(c.client_name === null || typeof c.client_name === "string") ||
    !Array.isArray(c.redirect_uris) || !c.redirect_uris.every((u) => typeof u === "string") ||
    typeof c.scope !== "string" ||
    typeof c.client_id_issued_at !== "number" || typeof c.approved_at !== "number"
  ) {
    return null;
  }
  return Object.freeze({
    client_id: c.client_id,
    client_name: c.client_name,
    redirect_uris: Object.freeze([...c.redirect_uris as string[]]),
    scope: c.scope,
    client_id_issued_at: c.client_id_issued_at,
    approved_at: c.approved_at,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Builds the id -> client map from file lines; the first approval of an id wins. */
export function buildClientMap(records: readonly unknown[]): {
  clients: Map<string, ClientRecord>;
  skipped: number;
} {
  const clients = new Map<string, ClientRecord>();
  let skipped = 0;
  for (const record of records) {
    const client = parseApprovalLine(record);
    if (client === null) {
      skipped++;
      continue;
    }
    if (!clients.has(client.client_id)) clients.set(client.client_id, client);
  }
  return { clients, skipped };
}
