/**
 * Durable records in the state directory, shared across server processes.
 *
 * @module
 */
export { isRecordName, RecordStore } from "./record_store.ts";
