/**
 * One approval: a human's answer to one prompted command, bound to exactly
 * what it approves. The record is what `htmcp approvals` shows and answers,
 * and what the server reads back before running anything.
 *
 * @module
 */

/**
 * Where an approval is in its life; only `pending -> allowed/denied/expired/withdrawn`
 * and `allowed -> used/expired/withdrawn` happen. `withdrawn`: the job waiting
 * for it was cancelled, or its server stopped, before it ran.
 */
export type ApprovalState = "pending" | "allowed" | "denied" | "expired" | "used" | "withdrawn";

/**
 * The stored record (kind `approvals`): one question to a human about one
 * run, and its answer. The server reads it back before running anything, so
 * every field that binds (owner, digest, policy hash) is checked there, and
 * the rest is what the operator is shown to decide on.
 */
export interface ApprovalRecord {
  /** The approval's id (`newApprovalId`), also the record's name. */
  readonly id: string;
  /** Who asked: the caller's owner key (`local` for stdio, `client:ID` over HTTP). */
  readonly owner: string;
  /** SHA-256 (hex) of the exact run specification: every stage's path, args, env, redirections, the cwd, the stdin digest. */
  readonly digest: string;
  /** The command as the human reads it: the argv that runs (a plan: its text). */
  readonly argv: readonly string[];
  /** The command text as the caller sent it (redacted). */
  readonly command_raw: string;
  /** The working folder, relative to the jail root. */
  readonly cwd: string;
  /** The identity (`sha256:...`) of the policy that held it: another policy's use is refused. */
  readonly policy_hash: string;
  /** The prompt rule's `args` entry and the operator's justification. */
  readonly rule: string;
  /** The operator's justification from the prompt rule, shown to whoever answers. */
  readonly justification: string;
  /** When it was asked (epoch milliseconds). */
  readonly created_ms: number;
  /** After this (epoch milliseconds, `approval.ttl_s` on), it can be neither answered nor used. */
  readonly expires_ms: number;
  /** Where it is in its life. */
  readonly state: ApprovalState;
  /** Who answered (`cli:USER`), null while pending. */
  readonly answered_by: string | null;
  /** When it was answered (epoch milliseconds), null while pending. */
  readonly answered_ms: number | null;
  /** Set when the server has written the `approval_answered` audit record. */
  readonly answer_audited?: boolean;
  /** The job that waits for this approval (a call that outlived `approval.wait_ms`). */
  readonly job_id?: string;
  /**
   * The call's standard input, when it gave one: its size, and its start as
   * text, redacted (what runs reads all of it; the digest binds it).
   */
  readonly stdin?: { readonly bytes: number; readonly preview: string };
}

const STATES: ReadonlySet<string> = new Set([
  "pending",
  "allowed",
  "denied",
  "expired",
  "used",
  "withdrawn",
]);

/** A stored value is an approval record (anything else is treated as absent). */
export function isApprovalRecord(value: unknown): value is ApprovalRecord {
  if (value === null || typeof value !== "object") return false;
  const r = value as Record<string, unknown>;
  return typeof r.id === "string" && typeof r.owner === "string" &&
    typeof r.digest === "string" && Array.isArray(r.argv) &&
    r.argv.every((word) => typeof word === "string") && typeof r.command_raw === "string" &&
    typeof r.cwd === "string" && typeof r.policy_hash === "string" &&
    typeof r.rule === "string" && typeof r.justification === "string" &&
    Number.isSafeInteger(r.created_ms) && Number.isSafeInteger(r.expires_ms) &&
    typeof r.state === "string" && STATES.has(r.state) &&
    (r.answered_by === null || typeof r.answered_by === "string") &&
    (r.answered_ms === null || Number.isSafeInteger(r.answered_ms)) &&
    (r.job_id === undefined || typeof r.job_id === "string") &&
    (r.stdin === undefined || isStdinPreview(r.stdin));
}

function isStdinPreview(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const s = value as Record<string, unknown>;
  return Number.isSafeInteger(s.bytes) && typeof s.preview === "string";
}

/** A fresh approval id: 128 random bits, hex, so it can be neither guessed nor a path. */
export function newApprovalId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * SHA-256 (hex) of `value`'s JSON: the digest an approval is bound to. The
 * caller passes the whole run specification, so any change to what would run
 * changes the digest and the approval no longer serves it.
 *
 * @example
 * ```ts
 * import { runDigest } from "./mod.ts";
 * const a = await runDigest({ argv: ["/usr/bin/git", "push"], cwd: "." });
 * const b = await runDigest({ argv: ["/usr/bin/git", "push", "--force"], cwd: "." });
 * a === b; // false: an approval of the first does not serve the second
 * ```
 */
export async function runDigest(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
