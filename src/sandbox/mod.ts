/**
 * Kernel sandbox for commands: bubblewrap options and rlimits, both pure
 * (policy in, argv out). `src/exec/` composes them into the launcher chain.
 *
 * @module
 */
export {
  buildBwrapArgs,
  ETC_FILES,
  type HostLayout,
  isUsrTarget,
  jailRootRefusal,
  SANDBOX_GID,
  SANDBOX_HOSTNAME,
  SANDBOX_UID,
  type SandboxRequest,
  SYSTEM_DIRS,
  UNKNOWN_LAYOUT,
} from "./bwrap_args.ts";
export { detectHostLayout } from "./host_layout.ts";
export { CPU_HARD_GRACE_SECONDS, prlimitOptions, rlimitPrefix } from "./rlimits.ts";
