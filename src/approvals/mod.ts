/**
 * Human approval of prompted commands: the records, bound to exactly what
 * they approve, and their store (docs/approvals.md).
 *
 * @module
 */
export {
  type ApprovalRecord,
  type ApprovalState,
  isApprovalRecord,
  newApprovalId,
  runDigest,
} from "./records.ts";
export { type ApprovalBinding, APPROVALS, ApprovalStore, type Transition } from "./store.ts";
export {
  type AlwaysRule,
  alwaysRuleFor,
  auditAlwaysLoaded,
  findAlwaysRule,
  writeAlwaysFile,
} from "./always.ts";
