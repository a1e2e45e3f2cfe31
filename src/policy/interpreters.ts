/**
 * Startup warnings for allowlisted commands that run arbitrary code by
 * design (shells, language runtimes, build tools and package managers), and
 * for commands whose escape-hatch guard the operator switched off. Allowing
 * one of these gives the model a general-purpose computer inside the jail;
 * the policy engine cannot see into the code it is handed, so only the
 * Deno permissions and the kernel sandbox still apply.
 *
 * @module
 */

import { guardAppliesTo } from "./guard_check.ts";
import { GUARDS } from "./guards.ts";

/** Exact names of programs that execute code they are given. */
// deno-fmt-ignore
const INTERPRETER_NAMES: ReadonlySet<string> = new Set([
  "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "ash", "yash", "rbash", "csh",
  "tcsh", "fish", "elvish", "nu", "xonsh", "pwsh", "powershell", "ipython", "bun", "deno",
  "irb", "jruby", "Rscript", "R", "julia", "ghci", "runghc", "guile", "racket", "sbcl", "clisp",
  "ocaml", "java", "jshell", "groovy", "scala", "kotlin", "osascript", "make", "gmake",
  "cmake", "ninja", "npm", "npx", "yarn", "pnpm", "pip", "pip3", "pipx", "uv", "poetry", "cargo",
  "go", "gcc", "cc", "c++", "g++", "clang", "clang++", "tcc", "sqlite3", "psql", "mysql",
  "docker", "podman", "kubectl", "ssh",
]);

/** Versioned families: `python3.12`, `perl5.36`, `lua5.4`, `php8.2`... */
const INTERPRETER_PATTERNS: readonly RegExp[] = [
  /^python[0-9.]*$/,
  /^pypy[0-9.]*$/,
  /^perl[0-9.]*$/,
  /^ruby[0-9.]*$/,
  /^php[0-9.]*$/,
  /^lua(jit)?[0-9.]*$/,
  /^node(js)?[0-9.]*$/,
  /^tclsh[0-9.]*$/,
  /^wish[0-9.]*$/,
];

/**
 * Whether `name` is a program that runs code it is handed (a shell, python,
 * node, perl and the like, with version suffixes): allowlisting one allows
 * every command, so the loader warns about it.
 *
 * @param name A command name or basename.
 * @returns True for a known interpreter.
 */
export function isInterpreter(name: string): boolean {
  return INTERPRETER_NAMES.has(name) || INTERPRETER_PATTERNS.some((pattern) => pattern.test(name));
}

/**
 * One warning sentence per allowlisted interpreter, and per allowlisted
 * command whose guard is disabled.
 *
 * @param names Allowlisted command names (and, if known, real-path basenames).
 * @param disabledGuards Guard names the operator switched off.
 * @returns Warnings to print once at startup.
 *
 * @example
 * ```ts
 * import { interpreterWarnings } from "./interpreters.ts";
 * interpreterWarnings(["ls", "python3"]);
 * // ['The allowlist contains "python3", which runs any code it is given: ...']
 * ```
 */
export function interpreterWarnings(
  names: Iterable<string>,
  disabledGuards: ReadonlySet<string> = new Set(),
): string[] {
  const warnings: string[] = [];
  const list = [...new Set(names)];
  for (const name of list) {
    if (isInterpreter(name)) {
      warnings.push(
        `The allowlist contains "${name}", which runs any code it is given: the policy cannot ` +
          `inspect that code, so only Deno permissions and the sandbox confine it.`,
      );
    }
  }
  for (const guard of GUARDS) {
    if (!disabledGuards.has(guard.name)) continue;
    for (const name of list.filter((item) => guardAppliesTo(guard, [item]))) {
      warnings.push(
        `Guard "${guard.name}" is disabled, so "${name}" may be run in a way that ${guard.reason}.`,
      );
    }
  }
  return warnings;
}
