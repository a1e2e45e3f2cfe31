/**
 * The audit log: typed records, an append-only hash-chained writer that
 * flushes each record to disk before resolving, and chain verification.
 *
 * Deny on failure: a write that did not reach the disk resolves
 * `{ ok: false }`, and a caller in fail-closed mode (`log.failMode`) must then
 * refuse the call with `AUDIT_UNAVAILABLE`.
 *
 * @example
 * ```ts
 * import { AuditLog, verifyAuditChain } from "./mod.ts";
 * const path = `${await Deno.makeTempDir()}/audit.jsonl`;
 * const opened = await AuditLog.open(path, "closed", { redact: (text) => text });
 * if (!opened.ok) throw new Error(opened.reason); // startup fails loudly
 * const written = await opened.log.writeEvent("server_stop", { reason: "example" });
 * // In fail-closed mode a write that did not reach the disk refuses the call.
 * if (!written.ok && opened.log.failMode === "closed") throw new Error("AUDIT_UNAVAILABLE");
 * await opened.log.close();
 * verifyAuditChain(await Deno.readTextFile(path)).ok; // true
 * ```
 *
 * @module
 */

export {
  type AttemptFields,
  type AuditEnvelope,
  type AuditEventFields,
  type AuditEventName,
  type AuditFailMode,
  type AuditFieldValue,
  type AuditPlanStage,
  type AuditRecordKind,
  type AuditStdin,
  type AuditVerdict,
  type AuditWriteResult,
  type ChainResetFields,
  type ExplainFields,
  GENESIS_HASH,
  type OutcomeFields,
  type RecordsDroppedFields,
  type SegmentFields,
  type SegmentFinding,
} from "./records.ts";
export type { Redact, RedactArgv } from "./build.ts";
export { AuditLog, type AuditLogOptions, type AuditOpenResult } from "./log.ts";
export {
  type ChainResetNote,
  ChainVerifier,
  type DroppedNote,
  type SegmentNote,
  verifyAuditChain,
  type VerifyReport,
} from "./verify.ts";
export {
  runAuditVerify,
  VERIFY_BROKEN,
  VERIFY_INTACT,
  VERIFY_INTACT_WITH_RESETS,
  VERIFY_UNREADABLE,
} from "./verify_file.ts";
export { reopenAuditOnSighup } from "./sighup.ts";
export { runAuditHead } from "./head_file.ts";
export {
  type Checkpoint,
  type CheckpointFields,
  type CheckpointReason,
  parseCheckpointLine,
  type ParseCheckpointResult,
} from "./checkpoint.ts";
// The types the records and options name, so the surface is complete.
export type { ResultCode } from "../result/codes.ts";
export type { AuditRotation } from "../config/types.ts";
export {
  type CheckpointKey,
  keyFingerprint,
  type KeyResult,
  loadOrCreateCheckpointKey,
  type PublicKeyJwk,
  readVerifyKey,
  type ReadVerifyKeyResult,
  type VerifyKey,
} from "./checkpoint_key.ts";
// The writer itself is the AuditLog's own part (one per log): only its settings are public.
export type { CheckpointSettings } from "./checkpoint_writer.ts";
export { type CheckpointVerifyRequest, runCheckpointVerify } from "./verify_checkpoints.ts";
