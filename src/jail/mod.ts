/**
 * The jail: working-directory and path-argument containment, decided on
 * real paths (every symlink followed), compared segment-wise with the jail
 * root. It refuses whenever it cannot prove a path stays inside. Its only
 * I/O is `lstat`/`readlink`/`stat` on the paths it judges.
 *
 * @module
 */

export type { JailRefusalCode, JailResult } from "./types.ts";
export { isInside } from "./is_inside.ts";
export { confineCwd } from "./confine_cwd.ts";
export { confineArgs, type ReachedPath } from "./confine_args.ts";
export { confinePlan, MAX_BASE_FOLDERS, type PlanReach } from "./confine_plan.ts";
export { gitFolderHolding, type GitFolderVerdict } from "./git_folders.ts";
export { listFolder, listFolderInJail, walkTree } from "./list_folder.ts";
export {
  CheckBudget,
  type FolderLister,
  type FolderListing,
  MAX_PATH_LOOKUPS,
  PATH_CHECK_DEADLINE_MS,
  type TreeListing,
  type TreeWalker,
} from "./budget.ts";
export { describeError, isMissing, type Resolution, resolveFollowingSymlinks } from "./resolve.ts";
export { gitRepositoryReader } from "./git_repository_reader.ts";
export {
  openRegularInJail,
  type OpenRegularRefusal,
  type OpenRegularResult,
} from "./open_regular.ts";
// The policy's types the jail's functions take and return, so the surface is complete.
export type { GitPathResolution, GitRepositoryReader, PathPlan } from "../policy/mod.ts";
