/**
 * Options that make a tool read the paths it opens from a file. Those
 * paths are not arguments, so no argument check sees them: `tar -cf t.tar
 * -T list` with `/etc/shadow` in `list` archives the host file. Without the
 * kernel sandbox such options are refused; with it, any path in the list
 * resolves inside the sandbox's mounts.
 *
 * (`sort --files0-from` is refused by its guard in `guards.ts`.)
 *
 * @module
 */

import { anyPrefixLong, type FlagSet, matchFlag } from "../flags.ts";

const LISTS: ReadonlyMap<string, FlagSet> = new Map([
  ["tar", { short: ["T"], long: [anyPrefixLong("files-from")], exact: [] }],
  ["gtar", { short: ["T"], long: [anyPrefixLong("files-from")], exact: [] }],
  ["bsdtar", { short: ["T"], long: [anyPrefixLong("files-from")], exact: [] }],
  ["du", { short: [], long: [anyPrefixLong("files0-from")], exact: [] }],
  ["wc", { short: [], long: [anyPrefixLong("files0-from")], exact: [] }],
  ["rsync", { short: [], long: [anyPrefixLong("files-from")], exact: [] }],
  ["find", { short: [], long: [], exact: ["-files0-from"] }],
]);

/**
 * The option of `argv` that reads paths from a file, or null.
 *
 * @param argv The whole argv.
 * @param tool The command's name (or the real file's name).
 */
export function pathListOption(argv: readonly string[], tool: string): string | null {
  const flags = LISTS.get(tool);
  if (flags === undefined) return null;
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    if (word === "--" && tool !== "find") return null;
    // tar's dash-less first argument is a cluster (`tar cTf list t.tar`).
    const cluster = tool.endsWith("tar") && index === 1 && !word.startsWith("-") ? word : null;
    const found = matchFlag(word, flags, cluster);
    if (found !== null) return found;
  }
  return null;
}
