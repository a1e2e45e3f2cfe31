/**
 * The path model: how each allowlisted tool composes the paths it opens
 * (folder changes, `cp --parents` and target-folder joins), which commands
 * create links (refused), and which walk trees through links (marked for
 * the jail to walk). Pure.
 *
 * @module
 */

export { type PathPlan, planPathChecks, type PlanResult } from "./plan.ts";
export { baseFolders, hasPathModel } from "./base_folders.ts";
export { readCopyOperands } from "./copy_operands.ts";
