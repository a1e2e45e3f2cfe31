/**
 * Which entries of a repository's own configuration htmcp refuses to let
 * git use. A `.git/config` in the jail is untrusted input (cloned, unpacked,
 * or written by an earlier command), and command-line `-c` does not always
 * win over it: `remote.<name>.uploadpack` keeps git's *first* value (the
 * repository's), driver keys are named by the repository (`filter.<x>.clean`),
 * and local transports drop our `-c` altogether. So the entries below are
 * refused outright rather than overridden; `git_safety.ts`' overrides stay as
 * a second line. Values that name files, `core.worktree` among them, are
 * judged by the caller (`git_repository.ts`), which can resolve paths.
 *
 * @module
 */

import type { GitConfigEntry } from "./git_config.ts";
import { isBuiltinMergeStrategy, rebasesMerges } from "./git_programs.ts";
import { isNetworkGitUrl } from "./git_urls.ts";

/**
 * Variable names whose value is a program (or a folder of programs) git
 * runs, wherever they appear: `core.fsmonitor`, `core.editor`, `core.pager`,
 * `core.askPass`, `core.sshCommand`, `core.gitProxy`,
 * `core.alternateRefsCommand`, `core.hooksPath`, `diff.external`,
 * `diff.<driver>.command`/`textconv`, `trailer.<t>.command`/`cmd`,
 * `tar.<format>.command`, `difftool`/`mergetool`/`man`/`browser.<tool>.cmd`,
 * `merge.<driver>.driver`, `filter.<driver>.clean`/`smudge`/`process`,
 * `credential[.<url>].helper`, `gpg[.<format>].program`,
 * `gpg.ssh.defaultKeyCommand`, `uploadpack.packObjectsHook`,
 * `sendemail.sendmailCmd`/`smtpServer`, `init.templateDir`, `man.viewer`,
 * `web.browser`/`help.browser`, `sequence.editor`, `interactive.diffFilter`
 * (run on `add -p` and its kin), `imap.tunnel`.
 */
// deno-fmt-ignore
const PROGRAM_NAMES: ReadonlySet<string> = new Set([
  "fsmonitor", "editor", "pager", "askpass", "sshcommand", "gitproxy", "alternaterefscommand",
  "hookspath", "external", "command", "textconv", "cmd", "driver", "clean", "smudge", "process",
  "helper", "program", "defaultkeycommand", "packobjectshook", "sendmailcmd", "smtpserver",
  "templatedir", "viewer", "browser", "difffilter", "tunnel",
]);

/** Sections whose `path` is a program (`mergetool.<tool>.path`, ...). */
const TOOL_SECTIONS: ReadonlySet<string> = new Set(["difftool", "mergetool", "man", "browser"]);

/**
 * Why git must not use `entry`, or null. Completes "the repository's
 * configuration ...".
 *
 * @param entry One parsed entry.
 */
export function refusedConfigEntry(entry: GitConfigEntry): string | null {
  const { section, name } = entry;
  if (section === "include" || section === "includeif") {
    return "includes another configuration file (include.path, includeIf), which htmcp cannot vet";
  }
  if (section === "url") {
    return "rewrites remote URLs (url.<base>.insteadOf), so htmcp cannot tell where git connects";
  }
  if (section === "remote" && (name === "uploadpack" || name === "receivepack")) {
    return `names the program run as the remote end (remote.*.${name}); git keeps the repository's first value over htmcp's override`;
  }
  if (section === "remote" && name === "vcs") {
    return "names a remote helper program (remote.*.vcs)";
  }
  if (section === "remote" && (name === "url" || name === "pushurl")) {
    if (entry.value === null || !isNetworkGitUrl(entry.value)) {
      return `names a local or non-network remote (remote.*.${name}): receive-pack and upload-pack would run in that repository, with its hooks`;
    }
    return null;
  }
  if (section === "pull" && (name === "twohead" || name === "octopus")) {
    // A list of strategies git tries in turn; any one outside git runs a program.
    const external = (entry.value ?? "").split(/\s+/).filter(Boolean)
      .find((strategy) => !isBuiltinMergeStrategy(strategy));
    if (external !== undefined) {
      return `names a merge strategy git runs as a program (pull.${name}; built in: ort, recursive, ours, subtree)`;
    }
    return null;
  }
  if ((section === "pull" || section === "branch") && name === "rebase") {
    // Rebasing merges writes merge lines git may run with the octopus script.
    if (rebasesMerges(entry.value ?? "")) {
      return `rebases merges (${section}${
        section === "branch" ? ".*" : ""
      }.rebase), writing merge lines git may run with the octopus strategy, a shell script`;
    }
    return null;
  }
  if (section === "branch" && name === "mergeoptions") {
    // Options git merge reads as if typed (split with git's own quoting), so
    // none of them passes the argument checks: `-F /host/file` read a host
    // file into the merge message and `'-sresolve'` ran the resolve script
    // (red team, round nine). Refused whatever it holds.
    return "holds options git merge takes as if typed, which no argument check sees (branch.*.mergeoptions)";
  }
  if (section === "submodule" && name === "update") {
    return "names a command run on submodule update (submodule.*.update)";
  }
  if (section === "submodule" && name === "ignore") {
    // Per submodule, it overrides diff.ignoreSubmodules=all: git would enter
    // that submodule and read its own configuration (round eleven).
    return "makes git enter a submodule, where that repository's own configuration runs (submodule.*.ignore)";
  }
  if (PROGRAM_NAMES.has(name) || (TOOL_SECTIONS.has(section) && name === "path")) {
    return `names a program git would run (${section}.${
      entry.subsection === null ? "" : "*."
    }${name})`;
  }
  return null;
}
