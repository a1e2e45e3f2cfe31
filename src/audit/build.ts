/**
 * Builds record bodies (everything after the chain envelope) from the
 * caller's fields, applying redaction itself.
 *
 * The log owns redaction of command text because a forgotten `redact()` call
 * at one call site would write a secret to disk forever; here it cannot be
 * forgotten. Each body copies named fields only, in a fixed order, so an
 * object that happens to carry `stdout` (a whole `CommandResult`, say) leaves
 * no trace of its output in the log.
 *
 * Misuse (a non-finite number, a reserved or content-bearing event key) is a
 * bug in the caller and throws `TypeError` before anything is written.
 *
 * @module
 */

import { parseTraceparent } from "./trace_context.ts";
import type {
  AttemptFields,
  AuditEventFields,
  AuditEventName,
  AuditRecordKind,
  ChainResetFields,
  ExplainFields,
  OutcomeFields,
  RecordsDroppedFields,
  SegmentFields,
} from "./records.ts";

/** A redaction function, e.g. `createRedactor(policy.redaction).redact`. */
export type Redact = (text: string) => string;

/** A record without its envelope: the kind and its fields in write order. */
export interface RecordBody {
  readonly kind: AuditRecordKind;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Keys the envelope owns. */
const RESERVED_KEYS: ReadonlySet<string> = new Set([
  "seq",
  "ts",
  "prev",
  "kind",
  "writer",
  "policy_hash",
  "event",
]);

/**
 * Keys that would carry output, bodies or credentials. An event is refused
 * outright rather than stripped, so the mistake shows up in the caller's tests.
 */
const CONTENT_KEYS: ReadonlySet<string> = new Set([
  "stdout",
  "stderr",
  "output",
  "body",
  "content",
  "code",
  "pin",
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "secret",
  "client_secret",
  "password",
  "authorization",
  "cookie",
  "code_verifier",
]);

/** Identifiers: random strings the redactor's entropy fallback could mistake for secrets. */
const IDENTIFIER_KEYS: ReadonlySet<string> = new Set([
  "client_id",
  "call_id",
  "tool",
  "jti",
  "approval_id",
]);

const EVENT_NAME = /^[a-z][a-z0-9_]{0,63}$/;

function requireString(name: string, value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`Audit field "${name}" must be a string.`);
  return value;
}

function requireCount(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`Audit field "${name}" must be a finite number >= 0, not ${value}.`);
  }
  return value;
}

function nullableString(name: string, value: unknown): string | null {
  return value === null ? null : requireString(name, value);
}

/**
 * Redacts a whole argv. Word by word is not enough (`--password hunter2`
 * splits the key from its value), so the log takes the redactor's own argv
 * function when it has one; word by word is the fallback.
 */
export type RedactArgv = (argv: readonly string[]) => string[];

function redactArgv(
  argv: readonly string[] | null,
  redact: Redact,
  whole: RedactArgv | undefined,
): string[] | null {
  if (argv === null) return null;
  const words = Array.from(argv, (word, index) => requireString(`argv[${index}]`, word));
  return whole === undefined ? words.map(redact) : whole(words);
}

/** @returns the `attempt` body with `command_raw`, `argv`, `cwd` and `reason` redacted */
export function buildAttempt(
  input: AttemptFields,
  redact: Redact,
  wholeArgv?: RedactArgv,
): RecordBody {
  return {
    kind: "attempt",
    fields: {
      call_id: requireString("call_id", input.call_id),
      tool: requireString("tool", input.tool),
      client_id: nullableString("client_id", input.client_id),
      command_raw: redact(requireString("command_raw", input.command_raw)),
      argv: redactArgv(input.argv, redact, wholeArgv),
      cwd: input.cwd === null ? null : redact(requireString("cwd", input.cwd)),
      verdict: requireString("verdict", input.verdict),
      code: nullableString("code", input.code),
      reason: redact(requireString("reason", input.reason)),
      ...(input.plan === undefined ? {} : {
        plan: input.plan.map((stage, index) => ({
          joined: stage.joined,
          argv: redactArgv(stage.argv, redact, wholeArgv),
          redirects: stage.redirects.map((text, at) =>
            redact(requireString(`plan[${index}].redirects[${at}]`, text))
          ),
        })),
      }),
      ...(input.approval_id === undefined ? {} : {
        approval_id: requireString("approval_id", input.approval_id),
      }),
      ...(input.queued_ms === undefined ? {} : {
        queued_ms: requireCount("queued_ms", input.queued_ms),
      }),
      ...(input.stdin === undefined ? {} : {
        stdin: {
          bytes: requireCount("stdin.bytes", input.stdin.bytes),
          sha256: requireString("stdin.sha256", input.stdin.sha256),
        },
      }),
      // The client's text: kept only in the W3C form (hex ids), never otherwise.
      ...(parseTraceparent(input.traceparent) === null ? {} : { traceparent: input.traceparent }),
      ...(input.protocol_era === undefined
        ? {}
        : { protocol_era: requireString("protocol_era", input.protocol_era) }),
    },
  };
}

/** @returns the `outcome` body: codes and counts only */
export function buildOutcome(input: OutcomeFields): RecordBody {
  const exitCode = input.exit_code;
  if (exitCode !== null && !Number.isSafeInteger(exitCode)) {
    throw new TypeError(`Audit field "exit_code" must be an integer or null, not ${exitCode}.`);
  }
  if (typeof input.truncated !== "boolean") {
    throw new TypeError(`Audit field "truncated" must be a boolean.`);
  }
  return {
    kind: "outcome",
    fields: {
      call_id: requireString("call_id", input.call_id),
      tool: requireString("tool", input.tool),
      client_id: nullableString("client_id", input.client_id),
      code: requireString("code", input.code),
      exit_code: exitCode,
      duration_ms: requireCount("duration_ms", input.duration_ms),
      stdout_bytes: requireCount("stdout_bytes", input.stdout_bytes),
      stderr_bytes: requireCount("stderr_bytes", input.stderr_bytes),
      truncated: input.truncated,
      ...(input.stages === undefined ? {} : {
        stages: input.stages.map((status, index) => {
          if (status !== null && !Number.isSafeInteger(status)) {
            throw new TypeError(`Audit field "stages[${index}]" must be an integer or null.`);
          }
          return status;
        }),
      }),
    },
  };
}

/** @returns the `explain` body with `command_raw`, `argv` and `reason` redacted */
export function buildExplain(
  input: ExplainFields,
  redact: Redact,
  wholeArgv?: RedactArgv,
): RecordBody {
  return {
    kind: "explain",
    fields: {
      call_id: requireString("call_id", input.call_id),
      tool: requireString("tool", input.tool),
      client_id: nullableString("client_id", input.client_id),
      command_raw: redact(requireString("command_raw", input.command_raw)),
      argv: redactArgv(input.argv, redact, wholeArgv),
      verdict: requireString("verdict", input.verdict),
      code: requireString("code", input.code),
      reason: redact(requireString("reason", input.reason)),
    },
  };
}

function eventValue(key: string, value: unknown, redact: Redact): unknown {
  const clean = IDENTIFIER_KEYS.has(key) ? (s: string) => s : redact;
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "string") return clean(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`Audit field "${key}" is not finite.`);
    return value;
  }
  if (Array.isArray(value)) {
    return Array.from(value, (item, index) => clean(requireString(`${key}[${index}]`, item)));
  }
  throw new TypeError(`Audit field "${key}" must be a string, number, boolean, null or string[].`);
}

/**
 * @returns the `event` body: `event` first, then the fields in the caller's
 *   key order, string values redacted except identifiers
 * @throws {TypeError} on a bad event name, a reserved or content-bearing key,
 *   or a nested value
 */
export function buildEvent<K extends AuditEventName>(
  event: K,
  input: AuditEventFields[K],
  redact: Redact,
): RecordBody {
  if (typeof event !== "string" || !EVENT_NAME.test(event)) {
    throw new TypeError(`Audit event name ${JSON.stringify(event)} is not a snake_case word.`);
  }
  const fields: Record<string, unknown> = { event };
  for (const [key, value] of Object.entries(input as Readonly<Record<string, unknown>>)) {
    if (RESERVED_KEYS.has(key)) {
      throw new TypeError(`Audit event "${event}" cannot set the reserved field "${key}".`);
    }
    if (CONTENT_KEYS.has(key)) {
      throw new TypeError(
        `Audit event "${event}" cannot carry "${key}": the log never holds content or credentials.`,
      );
    }
    fields[key] = eventValue(key, value, redact);
  }
  return { kind: "event", fields };
}

/** @returns the `chain_reset` body the log writes after finding a damaged line */
export function buildChainReset(input: ChainResetFields): RecordBody {
  return {
    kind: "chain_reset",
    fields: {
      cause: input.cause,
      damaged_bytes: input.damaged_bytes,
      last_good_seq: input.last_good_seq,
      last_good_sha256: input.last_good_sha256,
    },
  };
}

/** @returns the `segment` body the log writes first in a file it did not continue */
export function buildSegment(input: SegmentFields): RecordBody {
  return {
    kind: "segment",
    fields: {
      found: input.found,
      previous_seq: input.previous_seq,
      previous_sha256: input.previous_sha256,
      found_bytes: input.found_bytes,
      first_displaced_seq: input.first_displaced_seq,
      previous_file: input.previous_file,
    },
  };
}

/** @returns the `records_dropped` body the log writes once writing works again */
export function buildRecordsDropped(input: RecordsDroppedFields, redact: Redact): RecordBody {
  return {
    kind: "records_dropped",
    fields: {
      count: requireCount("count", input.count),
      first_ts: requireString("first_ts", input.first_ts),
      last_ts: requireString("last_ts", input.last_ts),
      // The reason quotes paths and system errors only, but goes through the
      // redactor like every other free text in the log.
      reason: redact(requireString("reason", input.reason)),
    },
  };
}
