/**
 * Durable state shared across server processes: the `StateStore` interface
 * and its two backends (the state directory; PostgreSQL for a fleet).
 * `RecordStore` stays as it was for code that has not moved yet.
 *
 * @module
 */
export { isRecordName, RecordStore } from "./record_store.ts";
export type {
  ChangeListener,
  StateBackend,
  StateStore,
  UpdateDecision,
  VersionedRecord,
  Watch,
} from "./store.ts";
export { LOCAL_POLL_MS, LocalStateStore } from "./local_store.ts";
export { PostgresStateStore } from "./postgres/store.ts";
export type { OpenResult, Sql } from "./postgres/client.ts";
export type { StateSettings } from "../config/types.ts";
export {
  type AppliedMigration,
  appliedVersion,
  migrate,
  type Migration,
  MIGRATIONS,
  SCHEMA_VERSION,
  schemaMismatch,
} from "./postgres/migrations.ts";
export {
  closeStateStore,
  describeError,
  openPool,
  type OpenStateResult,
  openStateStore,
  stateEnv,
  type StatePolicy,
  stateStoreFor,
} from "./open.ts";
