/**
 * Waits for something a server does after it answers (its operator log
 * line, for one), polling, bounded in time.
 *
 * @module
 */

/**
 * Resolves once `ready()` is true.
 *
 * @param what What is awaited, for the failure's message.
 * @throws {Error} When it is still false after `timeoutMs`.
 */
export async function waitUntil(
  ready: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
