/**
 * `[approval]`: how long an approval lives, how long a call waits for one,
 * and who may give it.
 *
 * @module
 */
import { resolve } from "../path/mod.ts";
import { type Checked, fail, pass } from "./_checked.ts";
import { loadAlwaysFile } from "./always_allow.ts";
import type { PolicyFile } from "./schema.ts";
import type { ApprovalSettings } from "./types.ts";

/** Five minutes to answer and use; a call waits thirty seconds before it says "pending". */
export const APPROVAL_DEFAULTS: ApprovalSettings = Object.freeze({
  ttlMs: 300_000,
  waitMs: 30_000,
  require: "any",
});

/**
 * The `[approval]` settings of `file`, with defaults (bounds are the
 * schema's), and the operator's always-allow rules read from
 * `always_allow_file` (relative to the policy's folder).
 *
 * @param forbidden Folders the always-allow file may not be in (the jail, the state dir).
 */
export async function buildApprovalSettings(
  file: PolicyFile,
  baseDir: string,
  forbidden: readonly string[],
): Promise<Checked<ApprovalSettings>> {
  const approval = file.approval ?? {};
  const base = {
    ttlMs: (approval.ttl_s ?? APPROVAL_DEFAULTS.ttlMs / 1_000) * 1_000,
    waitMs: approval.wait_ms ?? APPROVAL_DEFAULTS.waitMs,
    require: approval.require ?? APPROVAL_DEFAULTS.require,
  };
  if (approval.always_allow_file === undefined) return pass(Object.freeze(base));
  const path = resolve(baseDir, approval.always_allow_file);
  const loaded = await loadAlwaysFile(path, forbidden);
  if (!loaded.ok) return fail(`Policy key "approval.always_allow_file": ${loaded.message}`);
  return pass(Object.freeze({
    ...base,
    alwaysAllowFile: path,
    alwaysAllow: Object.freeze(loaded.file.rules.map((rule) => Object.freeze({ ...rule }))),
    alwaysAllowSha256: loaded.file.sha256,
  }));
}
