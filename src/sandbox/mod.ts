/**
 * Kernel sandbox for commands: bubblewrap options and rlimits, both pure
 * (policy in, argv out). `src/exec/` composes them into the launcher chain.
 *
 * @module
 */
export {
  buildBwrapArgs,
  type BwrapPolicy,
  DEV_NODES,
  ETC_COPIES,
  ETC_FOLDERS,
  FIRST_COPY_FD,
  type HostLayout,
  isUsrTarget,
  jailRootRefusal,
  type RunAsIdentity,
  SANDBOX_HOSTNAME,
  type SandboxRequest,
  SYSTEM_DIRS,
  UNKNOWN_LAYOUT,
} from "./bwrap_args.ts";
export { detectHostLayout, layoutFromLinks } from "./host_layout.ts";
export { CPU_HARD_GRACE_SECONDS } from "./rlimits.ts";
export { chooseRunAs, type RunAsChoice, type RunAsFacts, type UserEntry } from "./run_as.ts";
export { PATH_CHECK_ONLY_TAIL, PATH_CHECK_ONLY_WARNING, pathCheckOnlyNotice } from "./notice.ts";
// The `[sandbox] network` values `BwrapPolicy` names, so the surface is complete.
export type { SandboxNetwork } from "../config/types.ts";
