/**
 * The audit record schema: what each line of the audit log says.
 *
 * Every line is one JSON object whose first keys are the chain envelope
 * (`seq`, `ts`, `prev`, `kind`, `writer`, `policy_hash`) followed by the fields of its kind. Field names
 * are snake_case because the log is read by tools outside TypeScript.
 *
 * A record never carries command output, a request body, a token, a PIN or an
 * authorization code: the issue asks for "never output content", and a log
 * that held secrets would turn every reader of the log into a secret holder.
 * The writer builds each record from named fields only, so an object with an
 * extra `stdout` property passed by mistake is not copied.
 *
 * @module
 */

import type { AuditFailMode } from "../config/types.ts";
import type { ResultCode } from "../result/codes.ts";

export type { AuditFailMode };

/**
 * The `prev` of the first record of a chain: 64 zeros, the hex width of a
 * SHA-256, so every `prev` has the same shape.
 */
export const GENESIS_HASH: string = "0".repeat(64);

/** Every record kind the log writes. */
export type AuditRecordKind =
  | "attempt"
  | "outcome"
  | "explain"
  | "event"
  | "chain_reset"
  | "segment"
  | "records_dropped";

/** Whether the policy and jail let a command run. */
export type AuditVerdict = "allow" | "deny";

/** The chain envelope every line starts with. */
export interface AuditEnvelope {
  /** 1 for the first record of the file, then +1 per record. */
  readonly seq: number;
  /** ISO 8601 UTC time the record was written. */
  readonly ts: string;
  /** SHA-256 (lower-case hex) of the previous line's bytes without its newline; `GENESIS_HASH` first. */
  readonly prev: string;
  /** Which kind of record follows the envelope. */
  readonly kind: AuditRecordKind;
  /**
   * Random id of the writing `AuditLog` (one per server process), so the
   * records of several servers sharing one log can be told apart; the
   * writer's `server_start` event ties it to a pid.
   */
  readonly writer: string;
  /**
   * `sha256:` and 64 hex digits: the identity of the canonical policy that
   * judged the calls of this writer (see `htmcp policy test`), so a reader
   * can tie every line to the policy in force. Absent only from records of
   * a writer opened without a policy.
   */
  readonly policy_hash?: string;
}

/**
 * Written, and flushed to disk, before the executor starts; also for a call
 * the policy or jail refused (`verdict: "deny"`), so every refusal is on record.
 */
export interface AttemptFields {
  /** Random id shared by the attempt and its outcome. */
  readonly call_id: string;
  /** MCP tool name, e.g. `run_command`. */
  readonly tool: string;
  /** OAuth client id of the caller; null on stdio or when unknown. */
  readonly client_id: string | null;
  /** The command text as received. The log redacts it before writing. */
  readonly command_raw: string;
  /** The argv the policy judged; null when the text could not be split. The log redacts each word. */
  readonly argv: readonly string[] | null;
  /** The working directory: resolved when known, else as requested, else null. Redacted. */
  readonly cwd: string | null;
  /** `allow` when the command may start; `deny` when the policy or jail refused it. */
  readonly verdict: AuditVerdict;
  /** The refusal code when `verdict` is `deny`; null when the command is allowed to start. */
  readonly code: ResultCode | null;
  /** The policy's sentence (`policy_reason`). Redacted, since it may quote the command. */
  readonly reason: string;
  /**
   * A composed command's whole plan, as it will run: every stage's argv and
   * redirections, in order, with the connector before it. Absent for a
   * plain command (its argv is `argv`). The log redacts every word.
   */
  readonly plan?: readonly AuditPlanStage[];
  /**
   * The `stdin` text fed to the command, as its UTF-8 length and SHA-256
   * (hex), never its content: the input may hold data the log must not keep,
   * and the digest still proves which input ran. Absent when none was given.
   */
  readonly stdin?: AuditStdin;
  /**
   * The W3C `traceparent` the client sent in the call's `_meta`, so an
   * operator can join this record to the client's trace. Only a value of the
   * W3C form is written; anything else is left out, never echoed.
   */
  readonly traceparent?: string;
  /**
   * How long the call waited in the fair queue for a concurrency slot, in
   * ms; absent when it did not wait. A call refused after waiting has it too.
   */
  readonly queued_ms?: number;
  /** The MCP protocol era of the call (`2025`, `2026-07-28`). */
  readonly protocol_era?: string;
  /** The approval a prompted command ran under; absent for a command no prompt rule held. */
  readonly approval_id?: string;
}

/** What the audit keeps of a call's stdin text. */
export interface AuditStdin {
  /** Length of the text in UTF-8 bytes. */
  readonly bytes: number;
  /** SHA-256 (hex) of those bytes: proves which input ran without keeping it. */
  readonly sha256: string;
}

/** One stage of a plan in the audit record. */
export interface AuditPlanStage {
  /** `null` for the first stage, `|` inside a pipeline, or the sequence connector. */
  readonly joined: "|" | "&&" | "||" | ";" | null;
  /** The stage's argv as it runs (redacted by the log, word by word). */
  readonly argv: readonly string[];
  /** Redirections as text (`> /jail/out.txt`, `2>&1`), in order. */
  readonly redirects: readonly string[];
}

/** Written after the call ended, whatever the ending. Carries counts, never content. */
export interface OutcomeFields {
  /** A plan's stage exit statuses in order (null: skipped by `&&`/`||`); absent for a plain command. */
  readonly stages?: readonly (number | null)[];
  /** The attempt's `call_id`. */
  readonly call_id: string;
  /** MCP tool name. */
  readonly tool: string;
  /** OAuth client id of the caller; null on stdio or when unknown. */
  readonly client_id: string | null;
  /** The code the caller returned. */
  readonly code: ResultCode;
  /** The child's exit status; null when it did not run or was killed. */
  readonly exit_code: number | null;
  /** Wall time of the whole call in milliseconds. */
  readonly duration_ms: number;
  /** Bytes the command wrote to stdout (before redaction and the cap). */
  readonly stdout_bytes: number;
  /** Bytes the command wrote to stderr (before redaction and the cap). */
  readonly stderr_bytes: number;
  /** True when either stream was cut at `max_output_bytes`. */
  readonly truncated: boolean;
}

/** `explain_command` is audited too: it reveals policy, so who asked what is on record. */
export interface ExplainFields {
  /** Random id of this call. */
  readonly call_id: string;
  /** MCP tool name, normally `explain_command`. */
  readonly tool: string;
  /** OAuth client id of the caller; null on stdio or when unknown. */
  readonly client_id: string | null;
  /** Redacted by the log. */
  readonly command_raw: string;
  /** Redacted by the log; null when the text could not be split. */
  readonly argv: readonly string[] | null;
  /** What `run_command` would do with the same text. */
  readonly verdict: AuditVerdict;
  /** `OK` when the command would be allowed, else the refusal code. */
  readonly code: ResultCode;
  /** Redacted by the log. */
  readonly reason: string;
}

/** A value an event field may hold: flat, so every event stays one greppable line. */
export type AuditFieldValue = string | number | boolean | null | readonly string[];

/**
 * Event kinds and their fields, for subsystems other than the command path.
 *
 * To add a kind, add a property here (one line of schema), or, from another
 * module, augment the interface:
 *
 * ```ts
 * declare module "../audit/mod.ts" {
 *   interface AuditEventFields {
 *     sandbox_missing: { readonly mode: string };
 *   }
 * }
 * ```
 *
 * Field values must be `AuditFieldValue`s. String values are redacted by the
 * log, except the identifier fields `client_id`, `call_id` and `tool`. Keys
 * that name content or credentials (`stdout`, `body`, `token`, `pin`, ...) are
 * refused with a `TypeError`.
 */
export interface AuditEventFields {
  /** The server is up; `transport` says how clients reach it. */
  server_start: {
    readonly version: string;
    readonly transport: "stdio" | "http";
    readonly pid: number;
    readonly policy_file: string | null;
    readonly fail_mode: AuditFailMode;
  };
  /** The server is shutting down; `reason` is e.g. `"SIGTERM"` or `"stdin closed"`. */
  server_stop: { readonly reason: string };
  /** An HTTP request refused for size: never the body. */
  http_rejected: {
    readonly method: string;
    /** URL path only, never the query string (a token could ride in it). */
    readonly path: string;
    /** `Content-Length` as declared; null when absent. */
    readonly declared_bytes: number | null;
    /** Bytes read before the cut-off; null when refused on the declared length alone. */
    readonly observed_bytes: number | null;
    readonly limit: number;
    readonly status: number;
  };
  /** Dynamic client registration accepted (not yet approved). */
  client_registered: {
    readonly client_id: string;
    readonly client_name: string;
    readonly redirect_uris: readonly string[];
  };
  /** A client-id metadata document was refused (not allowlisted, unreachable, oversized, mismatched). */
  client_metadata_refused: { readonly client_id: string; readonly reason: string };
  /** The operator approved a client with the admin PIN. */
  client_approved: { readonly client_id: string; readonly scopes: readonly string[] };
  /** A wrong admin PIN: never the PIN itself. */
  pin_failed: {
    readonly client_id: string | null;
    readonly remote_addr: string | null;
    /** Failed attempts from this address inside the current rate-limit window. */
    readonly failures: number;
  };
  /** An authorization code was issued: never the code. */
  code_issued: { readonly client_id: string; readonly scopes: readonly string[] };
  /** An access token was issued: its `jti` and expiry, never the token. */
  token_issued: {
    readonly client_id: string;
    readonly jti: string;
    readonly scopes: readonly string[];
    readonly expires_at: string;
  };
  /** A bearer token was refused; `reason` is a short code like `"expired"`, never the token. */
  bearer_invalid: {
    readonly reason: string;
    readonly client_id: string | null;
    readonly remote_addr: string | null;
  };
  /** The operator revoked a client (`htmcp auth revoke`, which writes this itself). */
  client_revoked: { readonly client_id: string };
  /**
   * A running server read a revocation from the state dir and applies it
   * from now on. Each server sharing the log writes its own, so the log
   * shows when every one of them stopped honouring the client.
   */
  client_revocation_applied: { readonly client_id: string };
  /** An authenticated tool call over HTTP, tying the call id to the client. */
  tool_call: {
    readonly client_id: string;
    /** The JSON-RPC request id (as text), to match the client's own logs; never a secret. */
    readonly request_id: string | null;
    readonly tool: string;
  };
  /** An unexpected server error: the detail the client never sees. Redacted. */
  internal_error: {
    readonly call_id: string | null;
    readonly where: string;
    readonly message: string;
  };
}

/** The name of an event kind. */
export type AuditEventName = keyof AuditEventFields;

/**
 * Written by the log itself when it finds an incomplete line (a write cut off
 * by a crash or a full disk): the chain continues *through* the damaged bytes
 * (`prev` is their SHA-256) and the record says what was lost, so `verify`
 * can report the damage instead of accepting or rejecting it silently.
 */
export interface ChainResetFields {
  /** Why the log wrote this record; the only cause so far. */
  readonly cause: "incomplete_line";
  /** Length of the damaged line in bytes (without the newline the log added after it). */
  readonly damaged_bytes: number;
  /** `seq` of the last complete record before the damage; null when there was none. */
  readonly last_good_seq: number | null;
  /** SHA-256 of the last complete line before the damage; `GENESIS_HASH` when there was none. */
  readonly last_good_sha256: string;
}

/**
 * What the writer found at the log's path under its append lock when the file
 * there was no longer the one it had been appending to.
 *
 * - `rotated`: the writer itself renamed the full log (`[audit] rotate_bytes`,
 *   `rotate_daily`) to `previous_file` and started this one.
 * - `path_missing`: nothing at the path, and the file the writer had open
 *   still has a name elsewhere (renamed away by rotation); the writer created
 *   a new file.
 * - `file_removed`: nothing at the path, and the open file has no name left
 *   (deleted, or rotated and compressed away before the writer noticed).
 * - `new_empty_file`: another, empty file at the path (logrotate `create`).
 * - `file_replaced`: another file with content that does not continue this
 *   chain (renamed over the log, or hard-linked away and replaced).
 * - `file_truncated`: the same file, shorter than the writer last saw it
 *   (logrotate `copytruncate`, or records cut off).
 */
export type SegmentFinding =
  | "rotated"
  | "path_missing"
  | "file_removed"
  | "new_empty_file"
  | "file_replaced"
  | "file_truncated";

/**
 * The first record the writer puts in a file it did not continue: it names the
 * last head it knew, so a rotated series can be walked and a truncated or
 * replaced log is never a silent new chain at `seq 1`.
 */
export interface SegmentFields {
  /** What the writer found at the path that made it start a new segment. */
  readonly found: SegmentFinding;
  /** `seq` of the last record the writer knew of in the previous file; 0 when none. */
  readonly previous_seq: number;
  /** SHA-256 of that record's line; `GENESIS_HASH` when none. */
  readonly previous_sha256: string;
  /** Size in bytes of the file the writer found at the path (0 when it created one). */
  readonly found_bytes: number;
  /**
   * When the truncation struck during this writer's own append (between its
   * check and its write, which then landed at the start of the emptied
   * file): `seq` of the first record so displaced; otherwise null.
   */
  readonly first_displaced_seq: number | null;
  /** With built-in rotation: the name the previous file was renamed to (same folder); else null. */
  readonly previous_file: string | null;
}

/**
 * Written as soon as writing works again after records were lost in `open`
 * mode, so a gap is on record even though the calls ran.
 */
export interface RecordsDroppedFields {
  /** Records this writer could not write. */
  readonly count: number;
  /** ISO time of the first lost record. */
  readonly first_ts: string;
  /** ISO time of the last lost record. */
  readonly last_ts: string;
  /** The last reason a write failed. */
  readonly reason: string;
}

/** The result of every write: `ok` only once the record is on disk (after fdatasync). */
export type AuditWriteResult =
  | { readonly ok: true; readonly seq: number }
  | { readonly ok: false; readonly reason: string };
