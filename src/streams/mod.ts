/**
 * Byte-stream helpers shared by the HTTP transport and the OAuth server.
 *
 * @module
 */
export { readWithin, type ReadWithinResult } from "./read_within.ts";
export { type BudgetedReadResult, ByteBudget, readWithinBudget } from "./byte_budget.ts";
export { type ByteSink, SerialWrites, type SerialWritesHooks } from "./serial_writes.ts";
