/**
 * A deadline and a lookup count for one call's path checks. The checks run
 * before the command and on the model's input, so without a bound a crafted
 * argument or a huge tree would make the check itself the denial of
 * service. Running out is a refusal (the path cannot be shown to stay
 * inside), never a pass.
 *
 * @module
 */

/** How long one call's path checks may take in all. */
export const PATH_CHECK_DEADLINE_MS = 5_000;
/** How many `lstat`/`readlink`/`readDir` calls one call's path checks may make. */
export const MAX_PATH_LOOKUPS = 200_000;

/** Counts lookups against a deadline; shared by every check of one call. */
export class CheckBudget {
  readonly #deadline: number;
  #lookupsLeft: number;

  /**
   * @param deadlineMs Milliseconds from now.
   * @param lookups The most filesystem lookups allowed.
   */
  constructor(deadlineMs: number = PATH_CHECK_DEADLINE_MS, lookups: number = MAX_PATH_LOOKUPS) {
    this.#deadline = performance.now() + deadlineMs;
    this.#lookupsLeft = lookups;
  }

  /**
   * Takes one lookup. Returns null when allowed, else the sentence saying
   * which bound was hit.
   */
  spend(): string | null {
    this.#lookupsLeft--;
    if (this.#lookupsLeft < 0) {
      return `the path checks would need more than ${MAX_PATH_LOOKUPS} filesystem lookups`;
    }
    if (performance.now() > this.#deadline) {
      return `the path checks did not finish within ${PATH_CHECK_DEADLINE_MS} ms`;
    }
    return null;
  }
}
