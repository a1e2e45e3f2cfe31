/**
 * The one loopback predicate, as the loader and its neighbours name it: it
 * lives below every layer (`src/net/`) so the state backend uses it too.
 *
 * @module
 */
export { isLoopbackHost } from "../net/loopback.ts";
