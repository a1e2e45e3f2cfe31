/**
 * Egress for sandboxed commands (`[sandbox] network = "allowlist"`): the
 * allowlist predicate, the proxy outside the sandbox, and where its socket
 * lives. The in-sandbox forwarder is part of the launcher helper.
 *
 * @module
 */
export {
  denoNetGrant,
  type EgressRule,
  findEgressRule,
  normaliseHost,
  parseEgressRule,
} from "./rules.ts";
export { MAX_HEAD_BYTES, parseProxyRequest, type ProxyRequest } from "./request_head.ts";
export { isLocalAddress } from "./local_address.ts";
export { type EgressProxy, type EgressProxyOptions, startEgressProxy } from "./proxy.ts";
// The fail mode the proxy's options name (the audit log is the audit module's).
export type { AuditFailMode } from "../audit/mod.ts";
export {
  EGRESS_SLOTS,
  egressSocketDir,
  egressSocketPaths,
  listenOnFreeSlot,
} from "./socket_dir.ts";
