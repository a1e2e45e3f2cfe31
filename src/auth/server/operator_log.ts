/**
 * Lines for the operator on stderr (refused approval posts), rate-limited: an
 * anonymous client can post the approval form as often as it likes, and a
 * flood of lines must not bury the ones that matter or fill a journal. Every
 * refusal is audited regardless; only the printing is capped.
 *
 * @module
 */

/** Lines per window before the log goes quiet until the window ends. */
export const OPERATOR_LINES_PER_MINUTE = 20;
const WINDOW_MS = 60_000;

/**
 * Wraps `print` so that at most `max` lines go out per minute (fixed window),
 * plus one line saying the rest is only in the audit log.
 *
 * @param print Where a line goes (stderr in production).
 * @param now Clock in milliseconds.
 * @param max Lines per minute.
 */
export function rateLimitedLog(
  print: (line: string) => void,
  now: () => number,
  max: number = OPERATOR_LINES_PER_MINUTE,
): (line: string) => void {
  let windowStart = Number.NEGATIVE_INFINITY;
  let count = 0;
  return (line) => {
    const at = now();
    if (at - windowStart >= WINDOW_MS) {
      windowStart = at;
      count = 0;
    }
    count++;
    if (count <= max) print(line);
    else if (count === max + 1) {
      print(
        `htmcp: more than ${max} refused approvals this minute; the rest are only in the audit log.`,
      );
    }
  };
}
