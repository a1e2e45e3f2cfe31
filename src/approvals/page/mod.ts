/**
 * The operator's approval page over HTTP (`/approvals`), behind the admin
 * PIN: the browser path to `htmcp approvals allow|deny`.
 *
 * @module
 */
export {
  type ApprovalPageOptions,
  type ApprovalPageRoute,
  type ApprovalPageSetup,
  createApprovalPage,
} from "./route.ts";
export { APPROVAL_PAGE_PATH } from "./render.ts";
export { GRANT_TTL_MS, UNLOCK_TTL_MS } from "./forms.ts";
