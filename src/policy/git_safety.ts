/**
 * git reads configuration from the repository it runs in (`.git/config`),
 * and many keys there name programs git runs: hooks, `core.fsmonitor`,
 * `core.pager`, `core.editor`, `core.sshCommand`, `diff.external`,
 * `credential.helper`, `gpg.program`, aliases. A repository in the jail
 * (cloned, unpacked or written by an earlier command) is untrusted, so every
 * git run gets the overrides below. Command-line `-c` has the highest
 * precedence (git-config(1), "FILES"), and the environment variables win
 * over the configuration keys they shadow.
 *
 * git has no switch that ignores repository configuration as a whole, and
 * keys keyed by a driver name the repository chooses
 * (`filter.<name>.clean/smudge/process`, `merge.<name>.driver`,
 * `remote.<name>.uploadpack`) cannot be overridden in advance; those are
 * refused before git runs by the repository check (`git_repository.ts`),
 * and the overrides here are the second line. Diff drivers and textconv are
 * also closed by `--no-ext-diff --no-textconv` (`gitDiffSafetyArgs`).
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import type { ResolvedCommand } from "../config/types.ts";
import { basenameOf } from "./command_word.ts";
import { splitGitArgs } from "./git_args.ts";

/** Extra argv/env a command needs for safety; matches `src/exec/types.ts`. */
export interface CommandHardening {
  /** Arguments placed before the caller's arguments. */
  readonly prependArgs: readonly string[];
  /** Variables added to the child environment, overriding passed-through ones. */
  readonly env: Readonly<Record<string, string>>;
}

/** Where git looks for a signing program: nowhere (no user can create a folder in `/`). */
export const NO_SIGNING_PROGRAM = "/nonexistent/htmcp-starts-no-signing-program";

/** `-c key=value` pairs every git run gets. */
const GIT_CONFIG_OVERRIDES: readonly (readonly [string, string])[] = [
  ["core.fsmonitor", "false"], // runs a hook program on status/diff (CVE-2022-24765 class)
  ["core.hooksPath", "/dev/null"], // no hook runs: pre-commit, post-checkout, ...
  ["core.pager", "cat"],
  ["core.editor", ":"], // ":" is git's built-in no-op editor
  ["sequence.editor", ":"],
  ["core.askPass", ""],
  ["core.sshCommand", "ssh"],
  ["core.alternateRefsCommand", ""],
  ["core.attributesFile", "/dev/null"],
  ["credential.helper", ""], // an empty value resets the helper list
  // Signing and verifying start gpg, gpgsm or ssh-keygen, which no policy
  // names (and which read their own configuration from HOME, in the jail):
  // `commit -S`, `commit.gpgSign`, a rebase's saved `gpg_sign_opt` and
  // `log --show-signature` all end at this path, which does not exist, so
  // git reports "cannot run" and starts nothing.
  ["gpg.program", NO_SIGNING_PROGRAM],
  ["gpg.openpgp.program", NO_SIGNING_PROGRAM],
  ["gpg.x509.program", NO_SIGNING_PROGRAM],
  ["gpg.ssh.program", NO_SIGNING_PROGRAM],
  ["gpg.ssh.defaultKeyCommand", ""],
  ["log.showSignature", "false"],
  ["protocol.ext.allow", "never"], // ext:: URLs run an arbitrary command
  // A merge of several heads uses the octopus strategy, a shell script, by
  // default: with ort, which merges two heads only, git refuses it instead.
  ["pull.octopus", "ort"],
  // `add -i`/`-p` stays git's own code, not the Perl script a repository may ask for.
  ["add.interactive.useBuiltin", "true"],
  ["remote.origin.uploadpack", "git-upload-pack"],
  ["remote.origin.receivepack", "git-receive-pack"],
  // An embedded bare repository in the jail is not discovered implicitly
  // (the "bare repository" fsmonitor attack); read only from protected config.
  ["safe.bareRepository", "explicit"],
  // rerere opens every path MERGE_RR names in the work tree with fopen(),
  // following links: a conflicted file that a restore replaced with a link
  // to a host file was copied into rr-cache and printed by `rerere diff`
  // (red team). Off, rerere reads nothing (an rr-cache folder would
  // otherwise switch it on by itself).
  ["rerere.enabled", "false"],
  // rebase writes each todo line from this format and runs the list in the
  // same command: "%s%n%b" put a commit body's "exec ..." line into it (red
  // team, round eight). git's own default, whatever the repository says.
  ["rebase.instructionFormat", "%s"],
  // With it set, pull and checkout recurse into submodules without being
  // asked, and pull runs `git submodule update`, a shell script in 2.39.
  ["submodule.recurse", "false"],
  // git enters a submodule (a nested repository the index, a commit or
  // .gitmodules names) by running a git there, which reads that repository's
  // own configuration: its filters, diff programs and pager (rounds nine and
  // ten ran planted ones through status and diff). No run does: porcelain
  // ignores submodules, shows them as commit ids, and fetch and push do not
  // recurse (the options that would are guarded: git-submodule-entry). A
  // submodule.<name>.ignore overrides this for its submodule: refused in a
  // repository's configuration (git_config_rules.ts); checkout and switch,
  // which may write a .gitmodules holding one, run quiet (DIFF_SAFETY).
  ["diff.ignoreSubmodules", "all"],
  ["diff.submodule", "short"],
  ["status.submoduleSummary", "false"],
  ["fetch.recurseSubmodules", "false"],
  ["push.recurseSubmodules", "no"],
  // An autostash is applied after the merge or rebase by a `git stash
  // apply` of git's own, which ends by listing the work tree's status and
  // so enters the submodules a .gitmodules the merge wrote unmasks (red
  // team, round twelve). Off whatever the repository says; `--autostash`
  // is guarded (git-autostash).
  ["merge.autoStash", "false"],
  ["rebase.autoStash", "false"],
];

/** Environment every git run gets. */
const GIT_ENV: Readonly<Record<string, string>> = Object.freeze({
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_SYSTEM: "/dev/null",
  GIT_CONFIG_GLOBAL: "/dev/null",
  // git's per-user files (`ignore`, `attributes`, `config` under
  // `$XDG_CONFIG_HOME/git/`, else `$HOME/.config/git/`) live outside the
  // jail: a folder that does not exist keeps git from reading the host's.
  XDG_CONFIG_HOME: "/nonexistent/htmcp-no-user-config",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_PAGER: "cat",
  PAGER: "cat",
  GIT_EDITOR: ":",
  GIT_SEQUENCE_EDITOR: ":",
  GIT_ASKPASS: "",
  SSH_ASKPASS: "",
  GIT_TERMINAL_PROMPT: "0",
  // core.gitProxy is "first value wins", so `-c` cannot override a planted
  // one; a set (even empty) GIT_PROXY_COMMAND makes git skip the key.
  GIT_PROXY_COMMAND: "",
  // Local transports (`git push ../x.git`, `file://`, a remote whose URL is
  // a path) start receive-pack/upload-pack in the other repository without
  // GIT_CONFIG_PARAMETERS, so our core.hooksPath does not reach it and its
  // hooks run. With this list git itself refuses every transport but these
  // ("transport 'file' not allowed"), whatever configuration, insteadOf
  // rewrite or legacy remotes file named the address; the variable wins
  // over protocol.*.allow in any configuration (transport.c). ext:: is not
  // listed either.
  GIT_ALLOW_PROTOCOL: "http:https:git",
});

/**
 * The transports git may use: ssh only when the policy allowlists `ssh`
 * itself, since git starts it as a program (a policy that denies ssh must
 * not reach it through `git fetch ssh://...`).
 */
function allowedProtocols(sshAllowed: boolean): string {
  return sshAllowed ? "http:https:ssh:git" : "http:https:git";
}

/**
 * The global options (before the subcommand) that neutralise repository
 * configuration, e.g. `["--no-pager", "-c", "core.fsmonitor=false", ...]`.
 *
 * @returns A frozen array, to put between `git` and its arguments.
 */
export function gitSafetyArgs(): readonly string[] {
  return Object.freeze([
    "--no-pager",
    ...GIT_CONFIG_OVERRIDES.flatMap(([key, value]) => ["-c", `${key}=${value}`]),
  ]);
}

/**
 * The environment additions for git: no system or global config, no pager,
 * editor, prompt or proxy command, and network transports only.
 *
 * @returns The frozen variables to add to git's child environment.
 */
export function gitSafetyEnv(): Readonly<Record<string, string>> {
  return GIT_ENV;
}

const BOTH: readonly string[] = ["--no-ext-diff", "--no-textconv"];

/** Subcommands that honour diff drivers and textconv, and the options that switch them off. */
const DIFF_SAFETY: ReadonlyMap<string, readonly string[]> = new Map([
  ["diff", BOTH],
  ["log", BOTH],
  ["show", BOTH],
  ["whatchanged", BOTH],
  ["blame", ["--no-textconv"]],
  ["annotate", ["--no-textconv"]],
  // After moving HEAD, checkout and switch list the paths that differ,
  // entering every submodule to ask; a `submodule.<name>.ignore = none` in
  // the `.gitmodules` the same checkout writes overrides
  // diff.ignoreSubmodules=all, and that submodule's own filter ran (red
  // team, round eleven). Quiet, they list nothing and enter nothing.
  ["checkout", ["--quiet"]],
  ["switch", ["--quiet"]],
]);

/** `git reflog` subcommands that print no diffs; any other word means the implicit `show`. */
const REFLOG_QUIET = new Set(["expire", "delete", "exists", "list"]);

/** Where to insert which options, or null when the subcommand prints no diffs. */
function diffSafetyInsertion(
  args: readonly string[],
): { readonly at: number; readonly options: readonly string[] } | null {
  const git = splitGitArgs(args);
  if (git.subcommand === null) return null;
  const after = git.subcommandIndex + 1;
  const direct = DIFF_SAFETY.get(git.subcommand);
  if (direct !== undefined) return { at: after, options: direct };
  const next = args[after];
  if (git.subcommand === "reflog") {
    // `git reflog [show] [log options]`: `show` is a log in disguise.
    if (next === "show") return { at: after + 1, options: BOTH };
    return next !== undefined && REFLOG_QUIET.has(next) ? null : { at: after, options: BOTH };
  }
  if (git.subcommand === "stash" && (next === "list" || next === "show")) {
    return { at: after + 1, options: BOTH };
  }
  // apply and pop end by listing the work tree's status, which enters the
  // submodules that the stash's own .gitmodules unmasks (red team, round
  // twelve); quiet, they list nothing. `stash branch` takes no --quiet and
  // is guarded (git-stash-branch).
  if (git.subcommand === "stash" && (next === "apply" || next === "pop")) {
    return { at: after + 1, options: ["--quiet"] };
  }
  return null;
}

/**
 * Returns git's arguments with `--no-ext-diff`/`--no-textconv` inserted
 * right after a subcommand that would otherwise run `diff.external`,
 * `diff.<driver>.command` or `diff.<driver>.textconv` from repository
 * config: diff, log, show, whatchanged, reflog [show], stash list/show
 * (also for `-G`/`-S` pickaxe searches, which use textconv), blame and
 * annotate; and `--quiet` after checkout, switch and stash apply/pop,
 * whose listing of changed paths enters submodules (a later `--no-quiet`
 * is guarded: git-no-quiet). `status -v`/`commit -v` cannot take these options and are
 * refused by the `git-verbose-diff` guard instead; `range-diff`, whose
 * inner `git log` ignores them, is not an allowed subcommand.
 *
 * @param args git's arguments (argv without the command word).
 * @returns The arguments with the options inserted, or `args` itself when
 * the subcommand needs none.
 */
export function gitDiffSafetyArgs(args: readonly string[]): readonly string[] {
  const insertion = diffSafetyInsertion(args);
  if (insertion === null) return args;
  return [...args.slice(0, insertion.at), ...insertion.options, ...args.slice(insertion.at)];
}

/** Whether `command` is git (by allowlisted name or real path). */
export function isGit(command: ResolvedCommand): boolean {
  return command.name === "git" || basenameOf(command.realPath) === "git";
}

/**
 * The extra arguments and environment the executor applies to `command`:
 * git's safety options and variables for git, nothing for other commands.
 *
 * @param command The allowlisted command about to run.
 * @param jailRoot The jail's real path: git gets `GIT_CEILING_DIRECTORIES`
 *   set to its parent, so it never discovers a repository above the jail.
 * @param sshAllowed Whether the policy allowlists `ssh`: only then may git's
 *   ssh transport start it.
 * @returns `prependArgs` go before the decision's `argv.slice(1)`; `env`
 *   entries override the child environment.
 *
 * @example
 * ```ts
 * import { commandHardening } from "./git_safety.ts";
 * const git = { name: "git", path: "/usr/bin/git", realPath: "/usr/bin/git" };
 * const { prependArgs, env } = commandHardening(git);
 * // prependArgs: ["--no-pager", "-c", "core.fsmonitor=false", ...]
 * // env.GIT_CONFIG_GLOBAL === "/dev/null"
 * ```
 */
export function commandHardening(
  command: ResolvedCommand,
  jailRoot: string | null = null,
  sshAllowed = false,
): CommandHardening {
  if (!isGit(command)) return { prependArgs: [], env: {} };
  // git looks for a repository up from the cwd, past the jail root unless
  // told otherwise: a jail inside a checkout would let `git log` read the
  // host repository. The ceiling is the jail's parent, so the jail root
  // itself can still be the work tree; the sandbox mounts the jail at the
  // same path, so the value holds in both modes.
  const ceiling = jailRoot === null ? {} : { GIT_CEILING_DIRECTORIES: posix.dirname(jailRoot) };
  return {
    prependArgs: gitSafetyArgs(),
    env: { ...gitSafetyEnv(), GIT_ALLOW_PROTOCOL: allowedProtocols(sshAllowed), ...ceiling },
  };
}
