/**
 * Finds a tar archive name that GNU tar opens on another host. tar reads
 * `-f host:file` (and `--file=host:file`, `tar cf host:file`) as a remote
 * archive and starts `rsh` (or `--rsh-command`) to reach it, so a
 * "local" tar call runs a remote shell client and reads or writes outside
 * the jail. GNU tar's rule (rmt.h `_remdev`): the name is remote when it has
 * a colon with no `/` before it, unless `--force-local` is given. The test
 * here is that rule minus the leading-colon exception (`:x` is refused too):
 * a wider net than tar's, never a narrower one.
 *
 * The option grammar is GNU tar 1.34's (`tar --help`): the short options
 * below take a value (attached, or the next word), and a first argument
 * without a dash is a cluster of option letters whose values follow in order
 * (`tar cfb host:a.tar 20`). Values of other options are not skipped, which
 * can only make more words look like options, so more names are checked.
 *
 * @module
 */

import { longOptionName, matchesLong } from "./flags.ts";

/** GNU tar's short options that take a value. */
const SHORT_WITH_VALUE = new Set([..."bCfFgHIKLNTVX"]);

/** Whether GNU tar would read `name` as `host:path` (or something as wide). */
export function isRemoteArchiveName(name: string): boolean {
  const colon = name.indexOf(":");
  if (colon === -1) return false;
  const slash = name.indexOf("/");
  return slash === -1 || slash > colon;
}

/** The archive names given with `-f`/`--file`, as tar would read them. */
function archiveNames(args: readonly string[]): string[] {
  const names: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    if (word === "--") break;
    const long = longOptionName(word);
    if (long !== null) {
      // `--file`, and any abbreviation of it: getopt_long accepts the
      // unambiguous ones, and a wider net only checks more words.
      if (long.length > 0 && "file".startsWith(long)) {
        const equals = word.indexOf("=");
        const value = equals === -1 ? args[++index] : word.slice(equals + 1);
        if (value !== undefined) names.push(value);
      }
      continue;
    }
    const oldStyle = index === 0 && !word.startsWith("-");
    if (!oldStyle && !(word.startsWith("-") && word.length > 1)) continue;
    const letters = oldStyle ? word : word.slice(1);
    let next = index + 1;
    for (let at = 0; at < letters.length; at++) {
      const letter = letters[at] as string;
      if (!SHORT_WITH_VALUE.has(letter)) continue;
      if (oldStyle) {
        // Old style: each value-taking letter takes the next word, in order.
        const value = args[next++];
        if (letter === "f" && value !== undefined) names.push(value);
        continue;
      }
      const attached = letters.slice(at + 1);
      const value = attached.length > 0 ? attached : args[next++];
      if (letter === "f" && value !== undefined) names.push(value);
      break;
    }
    index = next - 1;
  }
  return names;
}

/**
 * The first archive name GNU tar would open on a remote host, or null.
 *
 * @param args tar's arguments (argv without the command word).
 *
 * @example
 * ```ts
 * import { remoteArchiveName } from "./tar_archive.ts";
 * remoteArchiveName(["-xf", "host:a.tar"]); // "host:a.tar"
 * remoteArchiveName(["--force-local", "-xf", "a:b.tar"]); // null
 * ```
 */
export function remoteArchiveName(args: readonly string[]): string | null {
  if (hasForceLocal(args)) return null;
  return archiveNames(args).find(isRemoteArchiveName) ?? null;
}

/**
 * Whether `--force-local` is in force. It counts only where tar cannot be
 * reading it as something else: before `--` (after it, it is a file name)
 * and not right after a word that may take it as its value (`--exclude
 * --force-local`, `-X --force-local`); an ignored `--force-local` only
 * refuses more.
 */
function hasForceLocal(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  const options = end === -1 ? args : args.slice(0, end);
  return options.some((word, index) => {
    if (!matchesLong(word, { name: "force-local", minPrefix: "force".length })) return false;
    const previous = index === 0 ? null : options[index - 1] as string;
    if (previous === null) return true;
    if (previous.startsWith("--")) return previous.includes("=");
    const letters = previous.startsWith("-") ? previous.slice(1) : index - 1 === 0 ? previous : "";
    return ![...letters].some((letter) => SHORT_WITH_VALUE.has(letter));
  });
}
