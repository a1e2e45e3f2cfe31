/**
 * How `cp` and `mv` compose the paths they write. A check of each argument
 * alone misses the path the tool builds from two of them:
 *
 * - `cp --parents SRC... DIR` writes `DIR/SRC` (the whole source path,
 *   `..` included, appended under the folder);
 * - `-t DIR`, `--target-directory[=]DIR`, or a last operand that is a folder,
 *   writes `DIR/basename(SRC)` for each source, through any symlink already
 *   standing at that name.
 *
 * The options are read as GNU getopt does (clusters, attached and separate
 * values, unique long-option prefixes), so the operands are exactly the
 * ones the tool sees. The joined paths are returned as text, for the jail to
 * resolve like any other argument.
 *
 * @module
 */

/** What a `cp`/`mv` command line does with paths. */
export interface CopyOperands {
  /** Paths the tool composes (`DIR/SRC` or `DIR/basename(SRC)`). */
  readonly joins: readonly string[];
  /** The option that creates links instead of copies (`-s`, `--link`, ...), or null. */
  readonly linkOption: string | null;
  /** Whether the copy descends into folders (`-r`, `-R`, `-a`). */
  readonly recursive: boolean;
  /** Whether symlinks in the source are followed (`-L`, `--dereference`). */
  readonly dereference: boolean;
  /**
   * The sources `cp` copies links of as links: every source when `-P`,
   * `-d`, `--no-dereference`, `-a`, or `-r` without `-L`/`-H` (GNU's
   * default for recursive copies); none otherwise, and none for `mv`.
   */
  readonly linkCopySources: readonly string[];
}

interface OptionTable {
  /** Long options; `true` when they take a required value (separate word allowed). */
  readonly long: ReadonlyMap<string, boolean>;
  /** Short letters that take a value (attached or the next word). */
  readonly shortWithValue: string;
}

const CP: OptionTable = {
  long: new Map([
    ["archive", false],
    ["attributes-only", false],
    ["backup", false],
    ["copy-contents", false],
    ["debug", false],
    ["dereference", false],
    ["force", false],
    ["interactive", false],
    ["keep-directory-symlink", false],
    ["link", false],
    ["no-clobber", false],
    ["no-dereference", false],
    ["no-preserve", true],
    ["no-target-directory", false],
    ["one-file-system", false],
    ["parents", false],
    ["preserve", false],
    ["recursive", false],
    ["reflink", false],
    ["remove-destination", false],
    ["sparse", true],
    ["strip-trailing-slashes", false],
    ["suffix", true],
    ["symbolic-link", false],
    ["target-directory", true],
    ["update", false],
    ["verbose", false],
    ["context", false],
    ["help", false],
    ["version", false],
  ]),
  shortWithValue: "St",
};

const MV: OptionTable = {
  long: new Map([
    ["backup", false],
    ["context", false],
    ["debug", false],
    ["exchange", false],
    ["force", false],
    ["interactive", false],
    ["no-clobber", false],
    ["no-copy", false],
    ["no-target-directory", false],
    ["strip-trailing-slashes", false],
    ["suffix", true],
    ["target-directory", true],
    ["update", false],
    ["verbose", false],
    ["help", false],
    ["version", false],
  ]),
  shortWithValue: "St",
};

/**
 * The long option `name` abbreviates, as getopt_long decides: an exact name,
 * else the only option it is a prefix of. Null when unknown or ambiguous,
 * which the tool itself rejects, so nothing runs.
 */
function resolveLong(table: OptionTable, name: string): string | null {
  if (table.long.has(name)) return name;
  const matches = [...table.long.keys()].filter((option) => option.startsWith(name));
  return matches.length === 1 ? matches[0] as string : null;
}

/** The last segment of `path`, as `cp` names the copy inside a folder. */
function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  if (trimmed === "") return path === "" ? "" : "/";
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/**
 * Reads a `cp` or `mv` argv.
 *
 * @param argv The whole argv (`argv[0]` is the command word).
 * @param tool `"cp"` or `"mv"`.
 */
export function readCopyOperands(argv: readonly string[], tool: "cp" | "mv"): CopyOperands {
  const table = tool === "cp" ? CP : MV;
  const operands: string[] = [];
  let targetDir: string | null = null;
  let parents = false;
  let linkOption: string | null = null;
  let recursive = false;
  let dereference = false;
  let noDereference = false;
  let commandLineOnly = false;
  let endOfOptions = false;

  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    if (endOfOptions || word === "-" || !word.startsWith("-")) {
      operands.push(word);
      continue;
    }
    if (word === "--") {
      endOfOptions = true;
      continue;
    }
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const name = resolveLong(table, equals === -1 ? word.slice(2) : word.slice(2, equals));
      let value: string | null = equals === -1 ? null : word.slice(equals + 1);
      if (name !== null && table.long.get(name) === true && value === null) {
        value = argv[index + 1] ?? null;
        index++;
      }
      if (name === "target-directory" && value !== null) targetDir = value;
      if (name === "parents") parents = true;
      if (name === "symbolic-link" || name === "link") linkOption = `--${name}`;
      if (name === "recursive" || name === "archive") recursive = true;
      if (name === "dereference") dereference = true;
      if (name === "no-dereference" || name === "archive") noDereference = true;
      continue;
    }
    for (let at = 1; at < word.length; at++) {
      const letter = word[at] as string;
      if (table.shortWithValue.includes(letter)) {
        let value = word.slice(at + 1);
        if (value === "") {
          value = argv[index + 1] ?? "";
          index++;
        }
        if (letter === "t") targetDir = value;
        break;
      }
      if (tool === "cp" && (letter === "s" || letter === "l")) linkOption = `-${letter}`;
      if (tool === "cp" && (letter === "r" || letter === "R" || letter === "a")) recursive = true;
      if (tool === "cp" && letter === "L") dereference = true;
      if (tool === "cp" && (letter === "P" || letter === "d" || letter === "a")) {
        noDereference = true;
      }
      if (tool === "cp" && letter === "H") commandLineOnly = true;
    }
  }

  const destination = targetDir ?? (operands.length >= 2 ? operands[operands.length - 1] : null);
  const sources = targetDir !== null ? operands : operands.slice(0, -1);
  const joins: string[] = [];
  if (destination !== null && destination !== undefined) {
    for (const source of sources) {
      const tail = parents ? source : baseName(source);
      if (tail !== "") joins.push(`${destination}/${tail}`);
    }
  }
  // The last of -L/-P/-d wins in GNU cp; erring towards "copies links",
  // any of -P/-d/-a, or -r without -L, counts.
  const copiesLinks = tool === "cp" &&
    (noDereference || (recursive && !dereference && !commandLineOnly));
  return {
    joins,
    linkOption,
    recursive,
    dereference,
    linkCopySources: copiesLinks ? sources : [],
  };
}
