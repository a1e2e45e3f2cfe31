/**
 * Sessions: a persistent working directory per caller, durable in the state
 * store (the state directory, or PostgreSQL for a fleet), so every replica
 * sees the same sessions.
 *
 * @module
 */
export {
  sessionNotFound,
  sessionOwner,
  type SessionRecord,
  Sessions,
  sessionsFor,
  type StartResult,
} from "./sessions.ts";
// The `[sessions]` limits `Sessions` and `sessionsFor` take, so the surface is complete.
export type { SessionSettings } from "../config/types.ts";
