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
 * import { AuditLog } from "./src/audit/mod.ts";
 * const opened = await AuditLog.open(policy.auditLog, policy.auditFailMode, { redact });
 * if (!opened.ok) throw new Error(opened.reason); // startup fails loudly
 * const attempt = await opened.log.writeAttempt({ call_id, tool: "run_command", ... });
 * if (!attempt.ok && opened.log.failMode === "closed") return "AUDIT_UNAVAILABLE";
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
} from "./checkpoint.ts";
export {
  type CheckpointKey,
  keyFingerprint,
  loadOrCreateCheckpointKey,
  type PublicKeyJwk,
  readVerifyKey,
} from "./checkpoint_key.ts";
export { type CheckpointSettings, CheckpointWriter } from "./checkpoint_writer.ts";
export { type CheckpointVerifyRequest, runCheckpointVerify } from "./verify_checkpoints.ts";
