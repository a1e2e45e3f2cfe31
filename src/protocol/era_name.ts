/**
 * The protocol revision of the stateless era, as audit records and callers
 * name it. Its own module, so code that only compares eras loads no SDK.
 *
 * @module
 */

/** The protocol revision of the stateless era. */
export const MODERN_ERA = "2026-07-28";
