/**
 * `[approval]`: how long an approval lives, how long a call waits for one,
 * and who may give it.
 *
 * @module
 */
import { type Checked, pass } from "./_checked.ts";
import type { PolicyFile } from "./schema.ts";
import type { ApprovalSettings } from "./types.ts";

/** Five minutes to answer and use; a call waits thirty seconds before it says "pending". */
export const APPROVAL_DEFAULTS: ApprovalSettings = Object.freeze({
  ttlMs: 300_000,
  waitMs: 30_000,
  require: "any",
});

/** The `[approval]` settings of `file`, with defaults (bounds are the schema's). */
export function buildApprovalSettings(file: PolicyFile): Checked<ApprovalSettings> {
  const approval = file.approval ?? {};
  return pass(Object.freeze({
    ttlMs: (approval.ttl_s ?? APPROVAL_DEFAULTS.ttlMs / 1_000) * 1_000,
    waitMs: approval.wait_ms ?? APPROVAL_DEFAULTS.waitMs,
    require: approval.require ?? APPROVAL_DEFAULTS.require,
  }));
}
