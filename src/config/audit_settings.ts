/**
 * The `[audit]` table beyond the log's path: built-in rotation, signed
 * checkpoints, and whether the model may read its own records.
 *
 * @module
 */
import { basename, dirname } from "../path/mod.ts";
import type { AuditCheckpoints, AuditRotation } from "./types.ts";
import { type Checked, fail, pass } from "./_checked.ts";
import type { PolicyFile } from "./schema.ts";

/** What the `[audit]` table adds to the policy; absent keys stay absent. */
export interface AuditSettings {
  readonly auditRotation?: AuditRotation;
  readonly auditCheckpoints?: AuditCheckpoints;
  readonly auditExposeToModel?: boolean;
}

/** Records between two checkpoints when `checkpoint_every` is not set. */
export const DEFAULT_CHECKPOINT_EVERY = 100;

/**
 * The checkpoint file beside the log: `audit.jsonl` -> `audit.checkpoints.jsonl`.
 * Not `audit.jsonl.checkpoints`: `audit.jsonl.*` is how a rotated series is listed.
 */
export function checkpointPathFor(auditLog: string): string {
  const name = basename(auditLog);
  const stem = name.endsWith(".jsonl") ? name.slice(0, -".jsonl".length) : name;
  return `${dirname(auditLog)}/${stem}.checkpoints.jsonl`;
}

/**
 * @param file the parsed policy file
 * @param auditLog the log's real path
 * @param stateDir the state dir (holds the signing key), or null
 * @returns the settings, or the sentence naming the key
 */
export function buildAuditSettings(
  file: PolicyFile,
  auditLog: string,
  stateDir: string | null,
): Checked<AuditSettings> {
  const audit = file.audit;
  const every = audit?.checkpoint_every;
  if (stateDir === null && (every !== undefined || audit?.checkpoint_stderr !== undefined)) {
    // The signing key lives in the state dir: without one there is nothing
    // to sign with, and silently writing no checkpoint would mislead.
    const key = every !== undefined ? "checkpoint_every" : "checkpoint_stderr";
    return fail(
      `Policy key "audit.${key}" needs "state_dir", where the checkpoint signing key is kept.`,
    );
  }
  const settings: {
    auditRotation?: AuditRotation;
    auditCheckpoints?: AuditCheckpoints;
    auditExposeToModel?: boolean;
  } = {};
  if (audit?.rotate_bytes !== undefined || audit?.rotate_daily !== undefined) {
    settings.auditRotation = {
      bytes: audit.rotate_bytes ?? null,
      daily: audit.rotate_daily ?? false,
    };
  }
  if (stateDir !== null) {
    settings.auditCheckpoints = {
      every: every ?? DEFAULT_CHECKPOINT_EVERY,
      stderr: audit?.checkpoint_stderr ?? false,
      path: checkpointPathFor(auditLog),
    };
  }
  if (audit?.expose_to_model !== undefined) settings.auditExposeToModel = audit.expose_to_model;
  return pass(settings);
}
