/**
 * The unread-output bound shared by both transports: how many answer bytes a
 * client may leave unread before the server stops serving it (HTTP: the
 * connection is closed; stdio: the server stops). Room for the largest
 * single answer (both streams at the output cap, escaping, the text
 * rendering) several times over, so a client that reads at all is never cut.
 *
 * @module
 */

/** @param maxOutputBytes `[limits] max_output_bytes`. */
export function unreadBound(maxOutputBytes: number): number {
  return 8 * maxOutputBytes + 1024 * 1024;
}
