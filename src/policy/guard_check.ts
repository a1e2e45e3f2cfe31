/**
 * Applies the guard table (`guards.ts`) to one argv. Pure.
 *
 * @module
 */

import type { ResolvedCommand } from "../config/types.ts";
import { awkInvocation, findAwkProgramDanger } from "./awk_program.ts";
import { basenameOf } from "./command_word.ts";
import { matchFlag } from "./flags.ts";
import { splitGitArgs, unknownGlobalOption } from "./git_args.ts";
import { explicitGitAddresses, isLocalGitAddress } from "./git_urls.ts";
import { type FlagScope, type Guard, type GuardMatch, GUARDS } from "./guards.ts";
import { findSedScriptDanger, sedScripts } from "./sed_script.ts";
import { remoteArchiveName } from "./tar_archive.ts";

/** One guard refusing one argv. */
export interface GuardHit {
  readonly guard: Guard;
  /** What was refused (`"-exec"`, `the script "e id"`), or null for the whole command. */
  readonly what: string | null;
  /** Completes "because it ...": the guard's reason or a more precise one. */
  readonly why: string;
}

/** Whether `guard` covers a command known by any of `names`. */
export function guardAppliesTo(guard: Guard, names: readonly string[]): boolean {
  return guard.commands.some((command) => names.includes(command));
}

/**
 * The guards covering each command name, in table order: built once from
 * `guardAppliesTo`, so it cannot disagree with it. Every call asked the
 * whole table, four times, about its one command.
 */
const GUARDS_BY_NAME: ReadonlyMap<string, readonly Guard[]> = new Map(
  [...new Set(GUARDS.flatMap((guard) => guard.commands))].map((name) => [
    name,
    Object.freeze(GUARDS.filter((guard) => guardAppliesTo(guard, [name]))),
  ]),
);
const NO_GUARDS: readonly Guard[] = Object.freeze([]);

/**
 * The guards covering a command known by any of `names` (its allowlisted
 * name and the basename of its real path), in table order: exactly
 * `GUARDS.filter((guard) => guardAppliesTo(guard, names))`.
 */
export function guardsFor(names: readonly string[]): readonly Guard[] {
  const [first, ...others] = names;
  if (first === undefined) return NO_GUARDS;
  const own = GUARDS_BY_NAME.get(first) ?? NO_GUARDS;
  if (others.every((name) => name === first)) return own;
  return GUARDS.filter((guard) => guardAppliesTo(guard, names));
}

function scopedWords(scope: FlagScope, args: readonly string[]): readonly string[] {
  if (scope.in === "all") return args;
  const git = splitGitArgs(args);
  if (scope.in === "git-global") return git.global;
  if (git.subcommand === null) return [];
  if (scope.subcommands !== null && !scope.subcommands.includes(git.subcommand)) return [];
  return git.rest;
}

type Found = { readonly what: string | null; readonly why: string | null } | null;

function findMatch(match: GuardMatch, args: readonly string[]): Found {
  switch (match.kind) {
    case "command":
      return { what: null, why: null };
    case "flags": {
      const words = scopedWords(match.scope, args);
      for (let index = 0; index < words.length; index++) {
        const word = words[index] as string;
        // GNU tar reads a first argument without a dash as option letters (`tar xIf`).
        const oldStyle = match.scope.in === "all" && match.scope.tarOldStyle && index === 0 &&
          !word.startsWith("-");
        const spelling = matchFlag(word, match.flags, oldStyle ? word : null);
        if (spelling !== null) return { what: `"${word}"`, why: null };
      }
      return null;
    }
    case "git-operand": {
      const git = splitGitArgs(args);
      if (git.subcommand !== match.subcommand) return null;
      const operand = git.rest.find((word) => match.operands.includes(word));
      return operand === undefined ? null : { what: `"${match.subcommand} ${operand}"`, why: null };
    }
    case "git-subcommand-allowlist": {
      const unknown = unknownGlobalOption(args);
      if (unknown !== null) {
        return {
          what: `the global option "${unknown}"`,
          why:
            "is not a git global option htmcp knows, so it cannot tell which word is the subcommand",
        };
      }
      const git = splitGitArgs(args);
      if (git.subcommand === null || match.allowed.includes(git.subcommand)) return null;
      return { what: `the subcommand "${git.subcommand}"`, why: null };
    }
    case "sed-script": {
      const sed = sedScripts(args);
      if (sed.scriptFile !== null) {
        return {
          what: `the script file "${sed.scriptFile}"`,
          why: "reads its script from a file htmcp cannot inspect",
        };
      }
      for (const script of sed.scripts) {
        const danger = findSedScriptDanger(script);
        if (danger !== null) return { what: `the script "${script}"`, why: danger };
      }
      return null;
    }
    case "awk-program": {
      const awk = awkInvocation(args);
      if (awk.dangerousOption !== null) {
        return {
          what: `"${awk.dangerousOption}"`,
          why: "loads program code from a file or library, or writes a file",
        };
      }
      if (awk.specialAssignment !== null) {
        return {
          what: `the assignment "${awk.specialAssignment}"`,
          why: "sets a variable through which awk chooses the files it reads",
        };
      }
      for (const program of awk.programs) {
        const danger = findAwkProgramDanger(program);
        if (danger !== null) return { what: `the program "${program}"`, why: danger };
      }
      return null;
    }
    case "git-local-transport": {
      const git = splitGitArgs(args);
      if (git.subcommand === null) return null;
      const local = explicitGitAddresses(git.subcommand, git.rest).find(isLocalGitAddress);
      return local === undefined ? null : { what: `the repository address "${local}"`, why: null };
    }
    case "git-repository":
      // Needs the files on disk: the check step runs `inspectGitRepository`.
      return null;
    case "tar-remote-archive": {
      const name = remoteArchiveName(args);
      return name === null ? null : { what: `the archive "${name}"`, why: null };
    }
  }
}

/**
 * Indexes (into `args`) of the words that are sed scripts or awk programs
 * for a command the sed or awk guard covers: program text, not paths, so
 * the argument path check must not read `awk '/re/{print}'` as the absolute
 * path `/re/{print}`. Empty when the option parse was not certain (then
 * every word is path-checked, which can only over-refuse). The guard's own
 * enablement does not matter: a script is not a path either way.
 *
 * @param names The command's allowlisted name and the basename of its real path.
 * @param args The arguments after the command word.
 */
export function programWordIndexes(
  names: readonly string[],
  args: readonly string[],
): ReadonlySet<number> {
  const guards = guardsFor(names);
  const covers = (kind: GuardMatch["kind"]) =>
    guards.some((guard) => guard.match.some((match) => match.kind === kind));
  if (covers("sed-script")) return new Set(sedScripts(args).scriptIndexes);
  if (covers("awk-program")) return new Set(awkInvocation(args).programIndexes);
  return new Set();
}

/**
 * Returns the first enabled guard that refuses `args`, or null.
 *
 * @param names The command's allowlisted name and the basename of its real path.
 * @param args The arguments after the command word.
 * @param disabled Guard names the operator switched off.
 */
export function findGuardHit(
  names: readonly string[],
  args: readonly string[],
  disabled: ReadonlySet<string>,
): GuardHit | null {
  for (const guard of guardsFor(names)) {
    if (disabled.has(guard.name)) continue;
    for (const match of guard.match) {
      const found = findMatch(match, args);
      if (found !== null) {
        return { guard, what: found.what, why: found.why ?? guard.reason };
      }
    }
  }
  return null;
}

/** The refusal sentence for a guard hit. */
export function describeGuardHit(typed: string, hit: GuardHit): string {
  const subject = hit.what === null ? `"${typed}"` : `"${typed}" with ${hit.what}`;
  return `Cannot run ${subject}: guard "${hit.guard.name}" refuses it because it ${hit.why} ` +
    `(see ${hit.guard.source}).`;
}

/**
 * Whether `command` is git (by its name or its binary's): the command whose
 * repository the check step inspects, and the one command that may name a
 * git folder itself without the kernel sandbox (`src/plan/git_folder_paths.ts`).
 *
 * @param command The allowlisted command about to run.
 * @returns True for git.
 */
export function isGitCommand(command: ResolvedCommand): boolean {
  return guardsFor([command.name, basenameOf(command.realPath)]).some((guard) =>
    guard.match.some((match) => match.kind === "git-repository")
  );
}

/**
 * Whether the check step must run the repository check (`git_repository.ts`)
 * for this command: it is git and the `git-repository` guard is on.
 *
 * @param command The allowlisted command about to run.
 * @param disabled Guard names the operator switched off.
 * @returns True when the repository must be inspected before the command runs.
 */
export function needsGitRepositoryCheck(
  command: ResolvedCommand,
  disabled: ReadonlySet<string>,
): boolean {
  return guardsFor([command.name, basenameOf(command.realPath)]).some((guard) =>
    !disabled.has(guard.name) && guard.match.some((match) => match.kind === "git-repository")
  );
}

/**
 * The refusal sentence when the repository check (`inspectGitRepository`)
 * refuses a git command, in the same form as every other guard's.
 *
 * @param typed The command word as typed.
 * @param reason The repository check's reason.
 * @returns The sentence naming the guard, the reason and its source.
 * @throws {RangeError} If the `git-repository` guard is missing from `GUARDS` (a bug).
 */
export function describeRepositoryRefusal(typed: string, reason: string): string {
  const guard = GUARDS.find((item) => item.match.some((match) => match.kind === "git-repository"));
  if (guard === undefined) throw new RangeError("The git-repository guard is missing.");
  return `Cannot run "${typed}": guard "${guard.name}" refuses it because ${reason} ` +
    `(see ${guard.source}).`;
}
