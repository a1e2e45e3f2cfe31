/**
 * The built-in escape-hatch guards, as data: arguments that turn a
 * read-only tool into one that runs programs or writes files, and commands
 * that exist only to run other commands. Each guard has a stable name the
 * operator can switch off (`[guards] disable = ["name"]`), the commands it
 * applies to (matched on the allowlisted name and on the basename of its
 * real path, so a renamed symlink does not dodge it), what it matches, and a
 * cited reason. All guards are on unless disabled.
 *
 * Sources: GTFOBins (https://gtfobins.github.io/) catalogues how each of
 * these tools escapes; the manual pages say what each option does.
 *
 * @module
 */

import { anyPrefixLong, type FlagSet, type LongOption } from "./flags.ts";

/** Where a flag guard looks for its flags. */
export type FlagScope =
  /** Every argument; `tarOldStyle` also reads a dash-less first argument as a cluster. */
  | { readonly in: "all"; readonly tarOldStyle: boolean }
  /** git's global options, before the subcommand. */
  | { readonly in: "git-global" }
  /** Arguments after a git subcommand in `subcommands` (null: any subcommand). */
  | { readonly in: "git-subcommand"; readonly subcommands: readonly string[] | null };

/** What a guard refuses. */
export type GuardMatch =
  /** The command itself, whatever its arguments. */
  | { readonly kind: "command" }
  /** Any of `flags`, looked for where `scope` says. */
  | { readonly kind: "flags"; readonly scope: FlagScope; readonly flags: FlagSet }
  /** A git subcommand followed by one of `operands` (`git bisect run`). */
  | {
    readonly kind: "git-operand";
    readonly subcommand: string;
    readonly operands: readonly string[];
  }
  /** Any git subcommand not in `allowed` (aliases and config-driven tools). */
  | { readonly kind: "git-subcommand-allowlist"; readonly allowed: readonly string[] }
  /** sed script commands that run programs or touch other files (`sed_script.ts`). */
  | { readonly kind: "sed-script" }
  /** awk programs and options that run programs or touch other files (`awk_program.ts`). */
  | { readonly kind: "awk-program" }
  /** A tar archive name GNU tar opens on another host (`tar_archive.ts`). */
  | { readonly kind: "tar-remote-archive" }
  /** A git repository address given explicitly that is a local or helper transport (`git_urls.ts`). */
  | { readonly kind: "git-local-transport" }
  /**
   * The repository git will use, read from disk by the check step
   * (`git_repository.ts`); nothing to match in the words alone.
   */
  | { readonly kind: "git-repository" };

/** One built-in guard. */
export interface Guard {
  /** Stable name, used in `[guards] disable` and in refusals. */
  readonly name: string;
  /** Command basenames the guard applies to. */
  readonly commands: readonly string[];
  /** Any one match refuses the command. */
  readonly match: readonly GuardMatch[];
  /** Completes "... because it ...": what the refused form does. */
  readonly reason: string;
  /** Where the escape is documented. */
  readonly source: string;
}

function flags(
  spec: { exact?: readonly string[]; long?: readonly LongOption[]; short?: readonly string[] },
): FlagSet {
  return { exact: spec.exact ?? [], long: spec.long ?? [], short: spec.short ?? [] };
}

const ALL: FlagScope = { in: "all", tarOldStyle: false };
const GTFO = "https://gtfobins.github.io/gtfobins/";

/**
 * git subcommands that run no program named by configuration: an alias
 * (`alias.x = !cmd` in a planted `.git/config`) cannot shadow these, and the
 * config-driven launchers (`difftool`, `mergetool`, `help`, `submodule
 * foreach`, `credential`, `maintenance`...), `config` itself (which
 * writes those settings) and `range-diff` (whose inner `git log` runs
 * textconv drivers whatever options it is given) are left out. So are
 * `sparse-checkout` (which writes lines of the model's choosing into a file
 * that `cp` can then put over `.git/config`) and `checkout-index` (whose
 * `--prefix` is text prepended to each path, so `--prefix=.gi` turns a
 * tracked `t/config` into `.git/config`).
 */
// deno-fmt-ignore
export const GIT_SAFE_SUBCOMMANDS: readonly string[] = Object.freeze([
  "add", "am", "annotate", "apply", "archive", "blame", "branch", "bundle",
  "cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout",
  "cherry", "cherry-pick", "clean", "clone", "column", "commit",
  "commit-graph", "commit-tree", "count-objects", "describe", "diff", "diff-files",
  "diff-index", "diff-tree", "fetch", "fmt-merge-msg", "for-each-ref", "format-patch", "fsck",
  "gc", "get-tar-commit-id", "grep", "hash-object", "index-pack", "init", "log", "ls-files",
  "ls-remote", "ls-tree", "mailinfo", "mailsplit", "merge", "merge-base", "merge-file",
  "merge-tree", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes",
  "pack-objects", "pack-refs", "prune", "prune-packed", "pull", "push",
  "read-tree", "rebase", "reflog", "remote", "repack", "replace", "rerere", "reset", "restore",
  "rev-list", "rev-parse", "revert", "rm", "shortlog", "show", "show-branch", "show-index",
  "show-ref", "stash", "status", "stripspace", "switch", "symbolic-ref",
  "tag", "unpack-file", "unpack-objects", "update-index", "update-ref", "var",
  "verify-commit", "verify-pack", "verify-tag", "version", "whatchanged", "worktree",
  "write-tree",
]);

/**
 * Commands whose only job is to run another command: why each is dangerous,
 * and whether GTFOBins lists it (otherwise its manual page is the source).
 */
const LAUNCHERS: readonly (readonly [string, string, boolean])[] = [
  ["env", "runs any program named in its arguments", true],
  ["xargs", "runs any program named in its arguments", true],
  ["timeout", "runs any program named in its arguments", true],
  ["nice", "runs any program named in its arguments", true],
  ["ionice", "runs any program named in its arguments", true],
  ["nohup", "runs any program, detached from the session", true],
  ["setsid", "runs any program in a new session, escaping process-group cleanup", true],
  ["stdbuf", "runs any program named in its arguments", true],
  ["unbuffer", "runs any program named in its arguments", true],
  ["sudo", "runs any program with other privileges", true],
  ["su", "runs a shell as another user", false],
  ["doas", "runs any program with other privileges", false],
  ["pkexec", "runs any program with other privileges", true],
  ["runuser", "runs any program as another user", false],
  ["chroot", "runs any program in another root", false],
  ["unshare", "runs any program in new namespaces", true],
  ["nsenter", "runs any program in other namespaces", true],
  ["flock", "runs any program named in its arguments", true],
  ["watch", "runs a command line through a shell", true],
  ["script", "runs a shell or a command line through a shell", true],
  ["time", "runs any program named in its arguments", true],
  ["taskset", "runs any program named in its arguments", true],
  ["chrt", "runs any program named in its arguments", false],
  ["prlimit", "runs any program named in its arguments", true],
  ["setpriv", "runs any program with changed privileges", false],
  ["setarch", "runs any program named in its arguments", true],
  ["capsh", "runs a shell with chosen capabilities", true],
  ["systemd-run", "starts any program as a system service, outside the sandbox", true],
  ["busybox", "is a multi-call binary that includes a shell", true],
  ["toybox", "is a multi-call binary that runs any of its applets", false],
  ["parallel", "runs command lines through a shell", false],
  ["strace", "runs any program named in its arguments", true],
  ["ltrace", "runs any program named in its arguments", true],
  ["gdb", "runs programs and shell commands", true],
  ["valgrind", "runs any program named in its arguments", true],
  ["fakeroot", "runs any program named in its arguments", false],
  ["firejail", "runs any program named in its arguments", false],
  ["at", "schedules a command line to run later, outside this call", true],
  ["batch", "schedules a command line to run later, outside this call", false],
  ["crontab", "schedules command lines to run later, outside this call", true],
  ["start-stop-daemon", "starts any program as a daemon", true],
  ["run-parts", "runs every program in a folder", true],
  ["sg", "runs a command line as another group", false],
  ["dbus-run-session", "runs any program named in its arguments", false],
  ["ssh-agent", "runs any program named in its arguments", true],
  ["rlwrap", "runs any program named in its arguments", true],
  ["expect", "runs programs and Tcl code", true],
  ["command", "runs any program named in its arguments", false],
  ["exec", "runs any program named in its arguments", false],
];

/** Pagers and editors: each can run a shell command from its own prompt or options. */
const INTERACTIVE: readonly (readonly [string, string])[] = [
  ["less", "pager-less"],
  ["more", "pager-more"],
  ["most", "pager-most"],
  ["pg", "pager-pg"],
  ["vi", "editor-vi"],
  ["vim", "editor-vim"],
  ["nvim", "editor-nvim"],
  ["view", "editor-view"],
  ["vimdiff", "editor-vimdiff"],
  ["rvim", "editor-rvim"],
  ["ex", "editor-ex"],
  ["ed", "editor-ed"],
  ["emacs", "editor-emacs"],
  ["nano", "editor-nano"],
  ["pico", "editor-pico"],
];

const ARGUMENT_GUARDS: readonly Guard[] = [
  {
    name: "find-exec",
    commands: ["find"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ exact: ["-exec", "-execdir", "-ok", "-okdir"] }),
    }],
    reason: "runs any program for each file found",
    source: `${GTFO}find/`,
  },
  {
    name: "find-delete",
    commands: ["find"],
    match: [{ kind: "flags", scope: ALL, flags: flags({ exact: ["-delete"] }) }],
    reason: "deletes every file found",
    source: "https://www.gnu.org/software/findutils/manual/html_node/find_html/Delete-Files.html",
  },
  {
    name: "find-write",
    commands: ["find"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ exact: ["-fprint", "-fprint0", "-fprintf", "-fls"] }),
    }],
    reason: "writes its results to a file it names",
    source: `${GTFO}find/`,
  },
  {
    name: "sort-compress-program",
    commands: ["sort"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("compress-program")] }),
    }],
    reason: "runs any program to compress temporary files",
    source: "https://www.gnu.org/software/coreutils/manual/html_node/sort-invocation.html",
  },
  {
    name: "sort-output",
    commands: ["sort"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("output")], short: ["o"] }),
    }],
    reason: "writes a file it names",
    source: `${GTFO}sort/`,
  },
  {
    name: "rg-exec",
    commands: ["rg"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("pre"), anyPrefixLong("hostname-bin")] }),
    }],
    reason: "runs any program (--pre preprocessor, --hostname-bin)",
    source: "https://github.com/BurntSushi/ripgrep/blob/master/GUIDE.md#preprocessor",
  },
  {
    name: "tar-exec",
    commands: ["tar", "gtar", "bsdtar"],
    match: [{
      kind: "flags",
      scope: { in: "all", tarOldStyle: true },
      flags: flags({
        long: [
          anyPrefixLong("to-command"),
          { name: "checkpoint-action", minPrefix: "checkpoint-".length },
          anyPrefixLong("use-compress-program"),
          anyPrefixLong("rsh-command"),
          anyPrefixLong("rmt-command"),
          anyPrefixLong("info-script"),
          anyPrefixLong("new-volume-script"),
        ],
        short: ["I", "F"],
      }),
    }],
    reason: "runs any program (--to-command, --checkpoint-action=exec, -I, --rsh-command, -F)",
    source: `${GTFO}tar/`,
  },
  {
    name: "tar-remote-archive",
    commands: ["tar", "gtar", "bsdtar"],
    match: [{ kind: "tar-remote-archive" }],
    reason:
      "opens an archive on another host through a remote shell (a colon before any / in the -f/--file name, without --force-local)",
    source: "https://www.gnu.org/software/tar/manual/html_node/remote-tape-server.html",
  },
  {
    name: "tar-files-from",
    commands: ["tar", "gtar", "bsdtar"],
    match: [{
      kind: "flags",
      scope: { in: "all", tarOldStyle: true },
      flags: flags({ long: [{ name: "files-from", minPrefix: "files".length }], short: ["T"] }),
    }],
    reason:
      "reads the names of the files to archive or extract from a file, out of reach of the argument path check (-T, --files-from)",
    source: "https://www.gnu.org/software/tar/manual/html_node/files.html",
  },
  {
    name: "files0-from",
    commands: ["sort", "wc", "du"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("files0-from")] }),
    }],
    reason:
      "reads the names of the files to open from a file, out of reach of the argument path check (--files0-from)",
    source: "https://www.gnu.org/software/coreutils/manual/html_node/wc-invocation.html",
  },
  {
    name: "diff-program",
    commands: ["diff3", "sdiff"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("diff-program")] }),
    }],
    reason: "runs any program to compare the files (--diff-program)",
    source: "https://www.gnu.org/software/diffutils/manual/html_node/Invoking-diff3.html",
  },
  {
    name: "tar-absolute-names",
    commands: ["tar", "gtar", "bsdtar"],
    match: [{
      kind: "flags",
      scope: { in: "all", tarOldStyle: true },
      flags: flags({ long: [anyPrefixLong("absolute-names")], short: ["P"] }),
    }],
    reason: "extracts members to absolute paths outside the jail",
    source: "https://www.gnu.org/software/tar/manual/html_node/absolute.html",
  },
  {
    name: "git-config-override",
    commands: ["git"],
    match: [
      {
        kind: "flags",
        scope: { in: "git-global" },
        flags: flags({ long: [anyPrefixLong("config-env")], short: ["c"] }),
      },
      {
        kind: "flags",
        scope: { in: "git-subcommand", subcommands: ["clone"] },
        flags: flags({ long: [anyPrefixLong("config")], short: ["c"] }),
      },
    ],
    reason: "sets configuration that names programs git runs (core.fsmonitor, core.pager, alias.*)",
    source: `${GTFO}git/`,
  },
  {
    name: "git-exec-path",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-global" },
      flags: flags({ long: [anyPrefixLong("exec-path")] }),
    }],
    reason: "makes git run its subcommands from a folder it names",
    source: "https://git-scm.com/docs/git#Documentation/git.txt---exec-pathltpathgt",
  },
  {
    name: "git-upload-pack",
    commands: ["git"],
    match: [
      {
        kind: "flags",
        scope: { in: "git-subcommand", subcommands: null },
        flags: flags({
          long: [
            anyPrefixLong("upload-pack"),
            anyPrefixLong("receive-pack"),
            anyPrefixLong("exec"),
          ],
        }),
      },
      {
        kind: "flags",
        scope: { in: "git-subcommand", subcommands: ["clone", "ls-remote"] },
        flags: flags({ short: ["u"] }),
      },
    ],
    reason: "runs any program as the remote end (--upload-pack, --receive-pack, --exec, -u)",
    source:
      "https://git-scm.com/docs/git-fetch#Documentation/git-fetch.txt---upload-packltupload-packgt",
  },
  {
    name: "git-apply-unsafe-paths",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["apply"] },
      flags: flags({ long: [anyPrefixLong("unsafe-paths")] }),
    }],
    reason: "lets a patch create or change files outside the work tree, at paths no argument shows",
    source: "https://git-scm.com/docs/git-apply#Documentation/git-apply.txt---unsafe-paths",
  },
  {
    name: "git-rebase-merges",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["rebase"] },
      flags: flags({ long: [anyPrefixLong("rebase-merges")], short: ["r"] }),
    }],
    reason:
      "writes and runs merge lines of its own, which git runs with the octopus strategy (a shell script) when a merge has more than one parent",
    source:
      "https://git-scm.com/docs/git-rebase#Documentation/git-rebase.txt---rebase-mergesrebase-cousinsno-rebase-cousins",
  },
  {
    name: "git-recurse-submodules",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["clone", "pull"] },
      flags: flags({ long: [anyPrefixLong("recurse-submodules"), anyPrefixLong("recursive")] }),
    }],
    reason:
      "runs git submodule update, in git 2.39 a shell script (the submodule subcommand itself is refused)",
    source:
      "https://git-scm.com/docs/git-clone#Documentation/git-clone.txt---recurse-submodulesltpathspecgt",
  },
  {
    name: "git-submodule-entry",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: {
        in: "git-subcommand",
        subcommands: [
          "checkout",
          "switch",
          "reset",
          "restore",
          "read-tree",
          "fetch",
          "push",
          "grep",
          "ls-files",
          "status",
          "diff",
          "show",
          "log",
          "whatchanged",
          "commit",
          "stash",
          "merge",
          "rebase",
          "cherry-pick",
          "revert",
          "worktree",
          "submodule",
          "diff-files",
          "diff-index",
          "diff-tree",
          "format-patch",
          "am",
          "apply",
          "add",
          "rm",
          "mv",
        ],
      },
      flags: flags({
        long: [
          anyPrefixLong("recurse-submodules"),
          anyPrefixLong("ignore-submodules"),
          anyPrefixLong("submodule"),
        ],
      }),
    }],
    reason:
      "makes git run a git inside submodules, which reads each one's own configuration (filters, diff programs); every run is set to leave submodules alone",
    source: "https://git-scm.com/docs/git-diff#Documentation/git-diff.txt---submoduleltformatgt",
  },
  {
    name: "git-no-quiet",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: null },
      flags: flags({ long: [anyPrefixLong("no-quiet")] }),
    }],
    reason:
      "undoes the --quiet htmcp gives checkout, switch and stash apply/pop, whose listing of changed paths enters submodules and runs their own configuration's programs",
    source: "https://git-scm.com/docs/git-checkout#Documentation/git-checkout.txt---quiet",
  },
  {
    name: "git-autostash",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["merge", "rebase", "pull"] },
      flags: flags({ long: [anyPrefixLong("autostash")] }),
    }],
    reason:
      "applies the stash afterwards with a status listing that enters submodules and runs their own configuration's programs",
    source: "https://git-scm.com/docs/git-merge#Documentation/git-merge.txt---autostash",
  },
  {
    name: "git-stash-branch",
    commands: ["git"],
    match: [{ kind: "git-operand", subcommand: "stash", operands: ["branch"] }],
    reason:
      "applies the stash with a status listing that enters submodules and runs their own configuration's programs, and takes no --quiet (git stash pop after git switch -c does the same quietly)",
    source:
      "https://git-scm.com/docs/git-stash#Documentation/git-stash.txt-branchltbranchnamegtltstashgt",
  },
  {
    name: "git-rebase-exec",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["rebase"] },
      flags: flags({ long: [anyPrefixLong("exec")], short: ["x"] }),
    }],
    reason: "runs a shell command after each commit",
    source: "https://git-scm.com/docs/git-rebase#Documentation/git-rebase.txt---execltcmdgt",
  },
  {
    name: "git-bisect-run",
    commands: ["git"],
    match: [{ kind: "git-operand", subcommand: "bisect", operands: ["run"] }],
    reason: "runs any program for each bisection step",
    source: "https://git-scm.com/docs/git-bisect#_bisect_run",
  },
  {
    name: "git-bisect-view",
    commands: ["git"],
    match: [{ kind: "git-operand", subcommand: "bisect", operands: ["view", "visualize"] }],
    reason:
      "runs gitk or an inner git log that uses the diff programs a repository's configuration names",
    source: "https://git-scm.com/docs/git-bisect#_bisect_visualizeview",
  },
  {
    name: "git-help",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "all", tarOldStyle: false },
      flags: flags({ long: [anyPrefixLong("help")] }),
    }],
    reason:
      "opens the manual with the viewer or browser a repository's configuration names (man.<tool>.cmd, browser.<tool>.cmd)",
    source: "https://git-scm.com/docs/git-help#_configuration_variables",
  },
  {
    name: "git-verbose-diff",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["status", "commit"] },
      flags: flags({ long: [anyPrefixLong("verbose")], short: ["v"] }),
    }],
    reason:
      "prints a diff through the textconv programs a repository's configuration names, and takes no --no-textconv",
    source: "https://git-scm.com/docs/gitattributes#_performing_text_diffs_of_binary_files",
  },
  {
    name: "git-grep-open-files-in-pager",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["grep"] },
      flags: flags({ long: [anyPrefixLong("open-files-in-pager")], short: ["O"] }),
    }],
    reason: "runs any program as the pager (-O, --open-files-in-pager)",
    source: `${GTFO}git/`,
  },
  {
    name: "git-output-file",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: null },
      flags: flags({ long: [anyPrefixLong("output")] }),
    }],
    reason: "writes its output to a file it names (--output)",
    source: "https://git-scm.com/docs/git-diff#Documentation/git-diff.txt---outputltfilegt",
  },
  {
    name: "git-diff-drivers",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: null },
      flags: flags({ long: [anyPrefixLong("ext-diff"), { name: "textconv", minPrefix: 5 }] }),
    }],
    reason:
      "runs the diff programs a repository's configuration names (--ext-diff, --textconv); htmcp also adds --no-ext-diff --no-textconv to diff, log, show, whatchanged, reflog, stash list/show and blame",
    source: "https://git-scm.com/docs/git-config#Documentation/git-config.txt-diffexternal",
  },
  {
    name: "git-template",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["clone", "init"] },
      flags: flags({ long: [anyPrefixLong("template")] }),
    }],
    reason: "copies hooks and files from a template folder into the new repository",
    source: "https://git-scm.com/docs/git-init#_template_directory",
  },
  {
    name: "git-trailer-commands",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["commit"] },
      flags: flags({ long: [anyPrefixLong("trailer")] }),
    }],
    reason: "runs the trailer.<token>.cmd programs a repository's configuration names",
    source:
      "https://git-scm.com/docs/git-interpret-trailers#Documentation/git-interpret-trailers.txt-trailerlttokengtcmd",
  },
  {
    name: "git-local-transport",
    commands: ["git"],
    match: [{ kind: "git-local-transport" }],
    reason:
      "uses a local, file:// or remote-helper transport, where receive-pack or upload-pack runs in the other repository without htmcp's overrides, with its hooks (only http, https, ssh and git addresses are allowed)",
    source: "https://git-scm.com/docs/git#Documentation/git.txt-GITALLOWPROTOCOL",
  },
  {
    name: "git-index-info",
    commands: ["git"],
    match: [{
      kind: "flags",
      scope: { in: "git-subcommand", subcommands: ["update-index"] },
      flags: flags({ long: [anyPrefixLong("cacheinfo"), anyPrefixLong("index-info")] }),
    }],
    reason:
      "puts any object at any path and mode in the index (--cacheinfo, --index-info), a step towards writing hooks or executables",
    source:
      "https://git-scm.com/docs/git-update-index#Documentation/git-update-index.txt---cacheinfoltmodegtltobjectgtltpathgt",
  },
  {
    name: "git-repository",
    commands: ["git"],
    match: [{ kind: "git-repository" }],
    reason:
      "would use a repository whose own files make git run a program or reach outside the jail (a gitfile, commondir, alternates, configuration value or, without the kernel sandbox, a link in the git folder leading out; includes, URL rewrites, core.worktree, remote.*.uploadpack/receivepack, local remote URLs or keys naming programs; a rebase in progress whose todo runs a command), would use a merge strategy git runs as a program, or would check out into a git folder",
    source: "https://git-scm.com/docs/git-config#_configuration_file",
  },
  {
    name: "git-subcommand",
    commands: ["git"],
    match: [{ kind: "git-subcommand-allowlist", allowed: GIT_SAFE_SUBCOMMANDS }],
    reason:
      "is not one of git's built-in subcommands that run no configured program (aliases, help, config, submodule, difftool, mergetool, credential and maintenance can run commands a repository names; bisect is a shell script in git 2.39)",
    source: "https://git-scm.com/docs/git-config#Documentation/git-config.txt-alias",
  },
  {
    name: "sed-commands",
    commands: ["sed", "gsed"],
    match: [{ kind: "sed-script" }],
    reason: "runs commands or reads and writes other files (e, s///e, w, W, r, R, -f)",
    source: `${GTFO}sed/`,
  },
  {
    name: "sed-in-place",
    commands: ["sed", "gsed"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("in-place")], short: ["i"] }),
    }],
    reason: "rewrites the files it reads (-i, --in-place)",
    source: "https://www.gnu.org/software/sed/manual/sed.html#Command_002dLine-Options",
  },
  {
    name: "awk-commands",
    commands: ["awk", "gawk", "mawk", "nawk", "original-awk"],
    match: [{ kind: "awk-program" }],
    reason:
      "runs commands or reads and writes other files (system(), pipes, redirection, @load, -f, -E, -i, -l, -W)",
    source: `${GTFO}awk/`,
  },
  {
    name: "zip-unzip-command",
    commands: ["zip"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("unzip-command")], short: ["TT"] }),
    }],
    reason: "runs any program to test the archive (-TT, --unzip-command)",
    source: `${GTFO}zip/`,
  },
  {
    name: "zip-test",
    commands: ["zip"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("test")], short: ["T"] }),
    }],
    reason:
      "tests the archive by running unzip through a shell command line built from its temporary folder (-b), which a quote in a folder name breaks out of (-T, --test)",
    source: "https://linux.die.net/man/1/zip",
  },
  {
    name: "gzip-suffix",
    commands: ["gzip", "gunzip", "zcat"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("suffix")], short: ["S"] }),
    }],
    reason:
      "joins the suffix it is given to each file name, a path no argument check sees whole: through a folder the name itself names it climbs out of the jail (-S, --suffix)",
    source: "https://www.gnu.org/software/gzip/manual/gzip.html#Invoking-gzip",
  },
  {
    name: "csplit-names",
    commands: ["csplit"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({
        long: [anyPrefixLong("prefix"), anyPrefixLong("suffix-format")],
        short: ["f", "b"],
      }),
    }],
    reason:
      "names the pieces it writes by joining a prefix and a printf format, a path no argument check sees whole (-f, --prefix, -b, --suffix-format)",
    source: "https://www.gnu.org/software/coreutils/manual/html_node/csplit-invocation.html",
  },
  {
    name: "patch-backup-names",
    commands: ["patch"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({
        long: [
          anyPrefixLong("suffix"),
          anyPrefixLong("prefix"),
          anyPrefixLong("basename-prefix"),
        ],
        short: ["z", "B", "Y"],
      }),
    }],
    reason:
      "names each backup it writes by joining a suffix or prefix to the file's name, a path no argument check sees whole (-z, -B, -Y)",
    source: "https://www.gnu.org/software/diffutils/manual/html_node/Backup-Names.html",
  },
  {
    name: "tar-backup-suffix",
    commands: ["tar", "gtar"],
    match: [{
      kind: "flags",
      scope: { in: "all", tarOldStyle: false },
      flags: flags({ long: [anyPrefixLong("suffix")] }),
    }],
    reason:
      "names the backup of an archive it overwrites by joining a suffix to it, a path no argument check sees whole (--suffix)",
    source: "https://www.gnu.org/software/tar/manual/html_node/backup.html",
  },
  {
    name: "sdiff-merge",
    commands: ["sdiff"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("output")], short: ["o"] }),
    }],
    reason:
      "merges interactively, and its e command starts ed, whose ! runs a shell command read from stdin (-o, --output)",
    source: "https://www.gnu.org/software/diffutils/manual/html_node/Merge-Commands.html",
  },
  {
    name: "tar-multi-volume",
    commands: ["tar", "gtar"],
    match: [{
      kind: "flags",
      scope: { in: "all", tarOldStyle: true },
      flags: flags({
        long: [anyPrefixLong("multi-volume"), anyPrefixLong("tape-length")],
        short: ["M", "L"],
      }),
    }],
    reason:
      "asks for each next volume on stdin, where `n NAME` writes a volume at any path and `!` starts a shell (-M, --multi-volume, -L, --tape-length; found by the red team)",
    source: "https://www.gnu.org/software/tar/manual/html_node/Multi_002dVolume-Archives.html",
  },
  {
    name: "wget-programs",
    commands: ["wget"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({
        long: [anyPrefixLong("use-askpass"), anyPrefixLong("execute"), anyPrefixLong("config")],
        short: ["e"],
      }),
    }],
    reason:
      "runs any program to ask for a password, before connecting anywhere (--use-askpass, or use_askpass through -e or a --config file; found by the red team)",
    source: "https://www.gnu.org/software/wget/manual/wget.html#Download-Options",
  },
  {
    name: "ssh-client-programs",
    commands: ["scp", "sftp"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ short: ["o", "F", "S", "D", "J"] }),
    }],
    reason:
      "runs a program of the caller's choosing: ProxyCommand or LocalCommand through -o or an -F config file, the ssh program (-S), the sftp server (-D), a jump host's ssh (-J)",
    source: `${GTFO}scp/`,
  },
  {
    name: "openssl-modules",
    commands: ["openssl"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({
        exact: [
          "engine",
          "-engine",
          "-keygen_engine",
          "-provider",
          "-provider-path",
          "-config",
          "-pre",
          "-post",
        ],
      }),
    }],
    reason:
      "loads a shared library of the caller's choosing as an engine or provider, or a config file that names one (found by the red team)",
    source: "https://www.openssl.org/docs/man3.0/man1/openssl-engine.html",
  },
  {
    name: "binutils-plugin",
    commands: ["nm", "ar", "ranlib", "objdump"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("plugin")] }),
    }],
    reason: "loads a shared library of the caller's choosing as a plugin (found by the red team)",
    source: "https://sourceware.org/binutils/docs/binutils/nm.html",
  },
  {
    name: "man-pager",
    commands: ["man"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({
        long: [anyPrefixLong("pager"), anyPrefixLong("html"), anyPrefixLong("config-file")],
        short: ["P", "H", "C"],
      }),
    }],
    reason: "runs any program as the pager or browser (-P, -H, -C config)",
    source: `${GTFO}man/`,
  },
  {
    name: "split-filter",
    commands: ["split"],
    match: [{ kind: "flags", scope: ALL, flags: flags({ long: [anyPrefixLong("filter")] }) }],
    reason: "runs a shell command for each piece (--filter)",
    source: `${GTFO}split/`,
  },
  {
    name: "rsync-remote-shell",
    commands: ["rsync"],
    match: [{
      kind: "flags",
      scope: ALL,
      flags: flags({ long: [anyPrefixLong("rsh"), anyPrefixLong("rsync-path")], short: ["e"] }),
    }],
    reason: "runs any program as its remote shell (-e, --rsh, --rsync-path)",
    source: `${GTFO}rsync/`,
  },
];

/** Every built-in guard, in the order they are checked. */
export const GUARDS: readonly Guard[] = Object.freeze([
  ...LAUNCHERS.map(([command, reason, onGtfobins]): Guard => ({
    name: `launcher-${command}`,
    commands: [command],
    match: [{ kind: "command" }],
    reason,
    source: onGtfobins
      ? `${GTFO}${command}/`
      : `https://man7.org/linux/man-pages/man1/${command}.1.html`,
  })),
  ...INTERACTIVE.map(([command, name]): Guard => ({
    name,
    commands: [command],
    match: [{ kind: "command" }],
    reason: "can run a shell command from its prompt or options",
    source: `${GTFO}${command}/`,
  })),
  ...ARGUMENT_GUARDS,
]);

/** Guard names, for validating `[guards] disable`. */
export const GUARD_NAMES: ReadonlySet<string> = new Set(GUARDS.map((guard) => guard.name));
