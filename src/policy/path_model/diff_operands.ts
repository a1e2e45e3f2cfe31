/**
 * The paths `diff` composes: given a file and a folder (`diff f d`, `diff d
 * f`, `--from-file=d f`, `--to-file=d f`), it compares the file with the
 * folder's entry of the same name, `d/f`, which no argument names. A link
 * planted at `d/f` would be read through. The model cannot tell folders
 * from files (it is pure), so it joins every pair of operands both ways;
 * a joined path that does not exist is inside by its text, one that does is
 * checked like any argument.
 *
 * @module
 */
import * as posix from "../../path/mod.ts";

/** The tools that compare a file with a folder's entry of its name. */
const DIFF_TOOLS: ReadonlySet<string> = new Set(["diff", "diff3", "sdiff"]);

/** The most operands whose pairs are joined: pairs grow with their square. */
export const MAX_DIFF_OPERANDS = 32;

/** Long options whose value is a path `diff` joins like an operand. */
const FILE_OPTIONS = ["--from-file", "--to-file"];

/**
 * `DIR/basename(FILE)` for every ordered pair of `diff`'s operands (and
 * `--from-file`/`--to-file` values), none for another tool, or null when
 * there are more than MAX_DIFF_OPERANDS (refused, not checked in part).
 *
 * @param argv The whole argv.
 * @param tool The command's name (or the real file's name).
 */
export function diffJoins(argv: readonly string[], tool: string): string[] | null {
  if (!DIFF_TOOLS.has(tool)) return [];
  const operands: string[] = [];
  let options = true;
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    if (options && word === "--") {
      options = false;
      continue;
    }
    const named = FILE_OPTIONS.find((option) => word === option || word.startsWith(`${option}=`));
    if (options && named !== undefined) {
      const value = word === named ? argv[++index] : word.slice(named.length + 1);
      if (value !== undefined) operands.push(value);
      continue;
    }
    // Option values read as operands only add joins that are checked too.
    if (!options || !word.startsWith("-") || word === "-") operands.push(word);
  }
  if (operands.length > MAX_DIFF_OPERANDS) return null;
  const joins: string[] = [];
  for (const folder of operands) {
    for (const file of operands) {
      if (folder === file || folder === "-" || file === "-") continue;
      const name = posix.basename(file);
      if (name !== "" && name !== "." && name !== "..") joins.push(`${folder}/${name}`);
    }
  }
  return joins;
}
