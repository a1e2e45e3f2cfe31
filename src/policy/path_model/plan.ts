/**
 * The path model of one command: which texts the jail must resolve, from
 * which folders, and which trees it must walk for links. Pure: it reads the
 * argv only; the jail (`src/jail/confine_plan.ts`) does the lookups.
 *
 * @module
 */

import { pathArgumentCandidates } from "../path_candidates.ts";
import { baseFolders, hasPathModel } from "./base_folders.ts";
import { type CopyOperands, readCopyOperands } from "./copy_operands.ts";
import { linkEffect } from "./links.ts";
import { computedOutputNames, pathListOption } from "./path_lists.ts";
import { diffJoins, MAX_DIFF_OPERANDS } from "./diff_operands.ts";

/** What the jail must check for one command. */
export interface PathPlan {
  /**
   * Folder changes in command-line order. Each is resolved from the folder
   * the tool is in at that point (a `chdir` moves it there; a `folder` does
   * not), and every candidate is checked from every folder that occurs.
   */
  readonly bases: readonly { readonly text: string; readonly kind: "chdir" | "folder" }[];
  /** Every text that names or may name a path, joins included. */
  readonly candidates: readonly string[];
  /**
   * Trees whose symlinks must all stay inside: these candidates where they
   * are folders (and `.` when the tool defaults to the cwd); empty for none.
   */
  readonly walks: readonly string[];
  /** The flag that made the walk necessary, for the refusal sentence. */
  readonly walkFlag: string;
  /**
   * Sources a copy would reproduce links of as links (`cp -r`, `-a`, `-P`):
   * refused if they are, or hold, any symlink, because the copy lands at
   * another depth where the same link text may lead outside.
   */
  readonly linkCopySources: readonly string[];
}

/** The plan, or a refusal decided from the arguments alone. */
export type PlanResult =
  | { readonly ok: true; readonly plan: PathPlan }
  | { readonly ok: false; readonly code: "POLICY_DENIED"; readonly reason: string };

function deny(reason: string): PlanResult {
  return { ok: false, code: "POLICY_DENIED", reason };
}

/**
 * Builds the path plan of `argv`.
 *
 * @param argv The decision's argv.
 * @param tools The names the command goes by: the allowlisted name first,
 *   then the real file's name (`cp` may be a link to a multi-call binary);
 *   the first one with a model is used.
 * @param sandboxed Whether the kernel sandbox will contain the command.
 * @returns The plan, or POLICY_DENIED with the sentence for the model.
 *
 * @example
 * ```ts
 * import { planPathChecks } from "./plan.ts";
 * planPathChecks(["tar", "-C", "..", "-cf", "t.tar", "x"], ["tar"], false);
 * // { ok: true, plan: { bases: [{ text: "..", kind: "chdir" }], candidates: [...], ... } }
 * ```
 */
export function planPathChecks(
  argv: readonly string[],
  tools: readonly string[],
  sandboxed: boolean,
): PlanResult {
  const collected = pathArgumentCandidates(argv);
  if (!collected.ok) return deny(collected.reason);
  const tool = tools.find((name) => hasPathModel(name)) ?? tools[0] ?? "";

  const folders = baseFolders(argv, tool);
  if (!folders.ok) {
    return deny(
      `htmcp has no model of how "${tool}" resolves paths, and "${folders.flag}" usually changes the folder they start from, so its paths cannot be checked. Run the command from that folder (the cwd argument) instead.`,
    );
  }
  const copy: CopyOperands | null = tool === "cp" || tool === "mv"
    ? readCopyOperands(argv, tool)
    : null;
  const effect = linkEffect(argv, tool, copy, sandboxed);
  if (effect.kind === "refuse") return deny(effect.reason);
  const list = sandboxed ? null : pathListOption(argv, tool);
  if (list !== null) {
    return deny(
      `"${list}" makes "${tool}" read the paths it opens from a file, which no argument check can see; without the kernel sandbox htmcp refuses it. Name the paths as arguments instead.`,
    );
  }
  const computed = sandboxed ? null : computedOutputNames(argv, tool);
  if (computed !== null) return deny(computed);

  // A folder value is checked as a folder change, from the folder the tool
  // is in at that point; checking it again from the folder it changes to
  // would refuse `tar -C .. -tf t.tar` for the `..` itself. Its word is
  // therefore left out of the candidates checked from every folder, but the
  // other candidates of a longer word (`--directory=..` itself) stay.
  const valueWords = new Map<number, string>();
  for (const change of folders.folders) valueWords.set(change.word, change.text);
  const checked = new Set<string>();
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    const value = valueWords.get(index);
    if (value === word) continue;
    const own = pathArgumentCandidates(["", word]);
    if (!own.ok) return deny(own.reason);
    for (const text of own.candidates) if (text !== value) checked.add(text);
  }
  const joined = diffJoins(argv, tool);
  if (joined === null) {
    return deny(
      `"${tool}" joins each of its operands with the others (diff f d reads d/f), and this command has more than ${MAX_DIFF_OPERANDS} of them for htmcp to check; split it into smaller commands.`,
    );
  }
  const candidates = [...checked, ...(copy?.joins ?? []), ...joined, ...gzipSuffixed(argv, tool)];
  const walks = effect.kind === "walk"
    ? [...collected.candidates, ...(effect.defaultsToCwd ? ["."] : [])]
    : [];
  return {
    ok: true,
    plan: {
      bases: folders.folders.map(({ text, kind }) => ({ text, kind })),
      candidates,
      walks,
      walkFlag: effect.kind === "walk" ? effect.flag : "",
      linkCopySources: copy?.linkCopySources ?? [],
    },
  };
}

/** The names gzip tries after a name that is missing (gzip.c's known suffixes). */
const GZIP_SUFFIXES: readonly string[] = [".gz", "-gz", ".z", "-z", "_z", ".Z", ".tgz", ".taz"];

/**
 * The names gzip, gunzip and zcat may open for each operand: when `NAME`
 * is missing they try `NAME.gz`, `NAME.z`, ... (red team: `zcat -f s`
 * printed a host file through a link moved to `s.gz`). Checked as
 * candidates, each only when it exists.
 */
function gzipSuffixed(argv: readonly string[], tool: string): string[] {
  if (tool !== "gzip" && tool !== "gunzip" && tool !== "zcat") return [];
  const operands = argv.slice(1).filter((word) => !word.startsWith("-"));
  return operands.flatMap((name) => GZIP_SUFFIXES.map((suffix) => `${name}${suffix}`));
}
