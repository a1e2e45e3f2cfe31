/**
 * Environment names the policy may never pass to a child, as data with the
 * reason for each.
 *
 * `[env] pass` copies values from the server's own environment, which the
 * model cannot touch; but an operator's shell often carries variables that
 * make an allowlisted binary load or run other code. Passing one of these
 * would turn `cat` into "run whatever the variable names", so they are a
 * startup error rather than a silent drop. Matching ignores case: ld.so only
 * honours the upper-case names, but no legitimate use needs the others.
 *
 * @module
 */

/** Prefixes refused outright, with the reason quoted in the startup error. */
export const REFUSED_ENV_PREFIXES: ReadonlyMap<string, string> = new Map([
  [
    "LD_",
    "the dynamic loader reads LD_* variables (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT) to inject code into every child",
  ],
  ["DYLD_", "the macOS dynamic loader reads DYLD_* variables to inject code into every child"],
  [
    "HTMCP_",
    "HTMCP_* variables configure this server and include secrets such as the OAuth admin PIN",
  ],
  [
    "GIT_",
    "GIT_* variables (GIT_CONFIG_*, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, GIT_EXEC_PATH) make git run other programs and would override the safe git environment",
  ],
  ["MALLOC_", "glibc MALLOC_* tunables change allocator behaviour in every child"],
  [
    "NPM_CONFIG_",
    "npm applies npm_config_* variables as its configuration (script-shell, node-options, prefix, registry)",
  ],
  [
    "PIP_",
    "pip applies PIP_* variables as its options (index URLs, --src and --target folders, config files)",
  ],
]);

/** Exact names refused, with the reason quoted in the startup error. */
export const REFUSED_ENV_NAMES: ReadonlyMap<string, string> = new Map([
  ["GLIBC_TUNABLES", "glibc parses it in every child, and it was the vector of CVE-2023-4911"],
  ["GCONV_PATH", "glibc loads character-conversion modules from it, which is code injection"],
  ["BASH_ENV", "bash runs the file it names before any script"],
  ["ENV", "POSIX shells run the file it names at start-up"],
  ["SHELLOPTS", "bash applies it to every child shell"],
  ["BASHOPTS", "bash applies it to every child shell"],
  ["PS4", "bash expands it (command substitution included) when tracing"],
  ["PROMPT_COMMAND", "bash runs it as a command"],
  ["IFS", "it changes how shells split words"],
  ["PYTHONPATH", "Python imports code from the folders it names"],
  ["PYTHONSTARTUP", "Python runs the file it names"],
  ["PYTHONHOME", "Python loads its standard library from it"],
  ["PERL5LIB", "Perl loads modules from the folders it names"],
  ["PERLLIB", "Perl loads modules from the folders it names"],
  ["PERL5OPT", "Perl applies it as command-line options (including -M)"],
  ["RUBYOPT", "Ruby applies it as command-line options (including -r)"],
  ["RUBYLIB", "Ruby loads code from the folders it names"],
  ["NODE_OPTIONS", "Node.js applies it as options (including --require)"],
  ["NODE_PATH", "Node.js resolves modules from the folders it names"],
  ["JAVA_TOOL_OPTIONS", "the JVM applies it as options (including -javaagent)"],
  ["_JAVA_OPTIONS", "the JVM applies it as options (including -javaagent)"],
  ["JDK_JAVA_OPTIONS", "the java launcher applies it as options"],
  ["PAGER", "tools run the program it names"],
  ["MANPAGER", "man runs the program it names"],
  ["EDITOR", "tools run the program it names"],
  ["VISUAL", "tools run the program it names"],
  ["LESSOPEN", "less runs it as an input preprocessor"],
  ["LESSCLOSE", "less runs it as a postprocessor"],
  ["BROWSER", "tools run the program it names"],
  ["SSH_ASKPASS", "ssh runs the program it names"],
  ["TAR_OPTIONS", "tar applies it as options (including --to-command and --use-compress-program)"],
  ["MAKEFLAGS", "make applies it as options and variable assignments (SHELL included)"],
  ["MFLAGS", "make applies it as options"],
  ["MAKEFILES", "make reads the makefiles it names, whose recipes it runs"],
  ["RSYNC_RSH", "rsync runs it as its remote shell"],
  ["PYTHONWARNINGS", "Python imports the warning categories it names, which can be any module"],
  ["PYTHONBREAKPOINT", "Python imports and calls what it names at every breakpoint()"],
  ["PYTHONUSERBASE", "Python adds its site-packages to every import path"],
  ["LOCPATH", "glibc loads locale data from the folder it names"],
  ["NLSPATH", "catopen reads message catalogues from the paths it names"],
  [
    "CURL_HOME",
    "curl reads its configuration (.curlrc: URLs, files to write) from the folder it names",
  ],
  ["WGETRC", "wget reads the configuration file it names"],
]);

/** Why `name` may not be passed to a child, or null when it may. */
export function refusedEnvReason(name: string): string | null {
  const upper = name.toUpperCase();
  const exact = REFUSED_ENV_NAMES.get(upper);
  if (exact !== undefined) return exact;
  for (const [prefix, reason] of REFUSED_ENV_PREFIXES) {
    if (upper.startsWith(prefix)) return reason;
  }
  return null;
}
