/**
 * The Deno permission layer: a permission set derived from the policy, its
 * renderers (flags, JSON, systemd, Worker), the check of the permissions in
 * force, and self-confinement of a process started with broader ones.
 *
 * @module
 */
export type {
  Grant,
  PermissionOptions,
  PermissionSet,
  PermissionSetErrorCode,
  PermissionSetResult,
  Transport,
} from "./types.ts";
export { permissionSetFor } from "./permission_set.ts";
export { HTMCP_ENV_NAMES } from "./env_names.ts";
export {
  DEFAULT_IMPORT_HOSTS,
  LAZY_DYNAMIC_IMPORTS,
  renderDenoFlags,
  SERVER_V8_FLAGS,
  shellLine,
} from "./render_flags.ts";
export { NEVER_GRANTED, type PermissionSetJson, permissionSetToJson } from "./render_json.ts";
export { type WorkerPermissions, workerPermissions } from "./render_worker.ts";
export {
  defaultEnvironmentFile,
  isPlainUnitPath,
  renderSystemdUnit,
  type SystemdOptions,
  type UnitProgram,
} from "./render_systemd.ts";
export { buildPermissionSet, transportFor } from "./build.ts";
export { comparePermissions, type PermissionComparison } from "./effective.ts";
export {
  CONFINED_WORKER_NAME,
  isConfinedWorker,
  layerLine,
  type PermissionLayer,
  serveConfined,
  type ServeConfinedOptions,
} from "./confine.ts";
export { type LiveProbe, runLiveProbes } from "./probes.ts";
export { superviseChild } from "./reexec.ts";
