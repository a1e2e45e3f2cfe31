/**
 * The "nothing ran" proofs ask whether a canary path exists. Only `NotFound`
 * means "absent": any other error (a permission problem, a path too long,
 * a folder the test cannot search) is rethrown, so a proof can never pass
 * because the check itself failed.
 */

/** True when `path` exists (the link itself, not its target); false only on `NotFound`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
