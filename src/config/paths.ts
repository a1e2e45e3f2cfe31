/**
 * Path resolution for policy keys that name files and folders.
 *
 * The security checks here ("the audit log is not inside the jail") compare
 * *real* paths: a lexical comparison would let a symlink outside the jail that
 * points into it (or a jail reached through a symlink) hide the overlap. For a
 * path that does not exist yet, the real path of its deepest existing ancestor
 * stands in for it, and a dangling symlink is followed to its target, because
 * opening that path with `create: true` would create the target.
 *
 * @module
 */
import { basename, dirname, isAbsolute, resolve } from "../path/mod.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";

/** The most symlinks followed for one path, as Linux's `MAXSYMLINKS`. */
const MAX_SYMLINK_HOPS = 40;

/**
 * Resolves `value` against `baseDir` when relative. A leading `~` is refused:
 * it is never expanded, so the operator almost certainly meant their home.
 */
export function absolutePath(value: string, baseDir: string, label: string): Checked<string> {
  if (value.startsWith("~")) {
    return fail(
      `${label} is ${quote(value)}, but "~" is not expanded; write an absolute path instead.`,
    );
  }
  return pass(isAbsolute(value) ? resolve(value) : resolve(baseDir, value));
}

/**
 * The one containment predicate of every layer: segment by segment after
 * normalisation, so neither `/jail-evil` nor `/jail/../etc` is in `/jail`.
 */
export { isInside } from "../jail/is_inside.ts";

/**
 * The real path `path` refers to, whether or not it exists: `realpath` for an
 * existing entry; otherwise the real path of the deepest existing ancestor
 * with the missing names appended, following dangling symlinks.
 *
 * Under a Deno read grant that does not cover some ancestor (the generated
 * permission set grants a not-yet-created state dir, not its parent), that
 * ancestor is taken as written: Deno refuses to look, and the full real-path
 * check already ran when the grant was generated with broader permissions.
 *
 * @param path an absolute path
 * @returns the real path, or a sentence naming `label` when it cannot be checked
 */
export async function realPathForCheck(path: string, label: string): Promise<Checked<string>> {
  return await walk(path, label, 0);
}

async function walk(path: string, label: string, hops: number): Promise<Checked<string>> {
  if (hops > MAX_SYMLINK_HOPS) {
    return fail(
      `${label} passes through more than ${MAX_SYMLINK_HOPS} symlinks at ${quote(path)}.`,
    );
  }
  try {
    return pass(await Deno.realPath(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) return pass(path);
    if (!(error instanceof Deno.errors.NotFound)) return cannotCheck(label, path, error);
  }
  // Missing: either a dangling symlink (follow it) or a name that does not exist yet.
  try {
    const info = await Deno.lstat(path);
    if (info.isSymlink) {
      const target = await Deno.readLink(path);
      return await walk(resolve(dirname(path), target), label, hops + 1);
    }
    // Not a symlink, yet realpath said missing: another process (a second
    // server sharing this audit folder, say) created it between the two
    // calls. Look again; the hop budget bounds how often a racing writer can
    // make us retry.
    return await walk(path, label, hops + 1);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) return pass(path);
    if (!(error instanceof Deno.errors.NotFound)) return cannotCheck(label, path, error);
  }
  const parent = dirname(path);
  if (parent === path) return pass(path);
  const realParent = await walk(parent, label, hops);
  if (!realParent.ok) return realParent;
  return pass(resolve(realParent.value, basename(path)));
}

function cannotCheck(label: string, path: string, error: unknown): Checked<never> {
  const why = error instanceof Error ? error.message : String(error);
  return fail(`${label} names ${quote(path)}, which cannot be checked: ${why}.`);
}
