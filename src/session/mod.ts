/**
 * Sessions: a persistent working directory per caller, durable in the state directory.
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
