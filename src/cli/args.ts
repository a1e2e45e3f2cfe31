/**
 * A small, strict argument parser for the CLI verbs. Unknown flags are errors:
 * a security tool must not silently ignore a misspelt `--polcy` and fall back
 * to defaults the operator did not choose.
 *
 * @module
 */

export interface FlagSpec {
  /** Flags that take a value (`--policy FILE` or `--policy=FILE`). */
  readonly values?: readonly string[];
  /** Flags that are on/off switches. */
  readonly switches?: readonly string[];
}

export interface ParsedArgs {
  readonly values: ReadonlyMap<string, string>;
  readonly switches: ReadonlySet<string>;
  readonly positionals: readonly string[];
  /** Everything after a bare `--`, untouched. */
  readonly rest: readonly string[] | null;
}

export type ParseArgsResult =
  | { readonly ok: true; readonly args: ParsedArgs }
  | { readonly ok: false; readonly message: string };

/**
 * Parses `argv` against `spec`.
 *
 * @example
 * ```ts
 * parseArgs(["--policy", "p.toml", "--", "ls"], { values: ["--policy"] });
 * // { ok: true, args: { values: Map { "--policy" => "p.toml" }, rest: ["ls"], ... } }
 * ```
 */
export function parseArgs(argv: readonly string[], spec: FlagSpec): ParseArgsResult {
  const valueFlags = new Set(spec.values ?? []);
  const switchFlags = new Set(spec.switches ?? []);
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      return { ok: true, args: { values, switches, positionals, rest: argv.slice(i + 1) } };
    }
    if (arg.startsWith("-") && arg !== "-") {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg : arg.slice(0, eq);
      if (valueFlags.has(name)) {
        let value: string | undefined;
        if (eq !== -1) value = arg.slice(eq + 1);
        else value = argv[++i];
        if (value === undefined) return { ok: false, message: `The flag ${name} needs a value.` };
        if (values.has(name)) return { ok: false, message: `The flag ${name} is given twice.` };
        values.set(name, value);
        continue;
      }
      if (switchFlags.has(name) && eq === -1) {
        switches.add(name);
        continue;
      }
      return { ok: false, message: `Unknown flag "${arg}"; see htmcp --help.` };
    }
    positionals.push(arg);
  }
  return { ok: true, args: { values, switches, positionals, rest: null } };
}

/**
 * The flags of every verb, in one table that both `src/main.ts` and the
 * launcher (`scripts/launch.ts`) read, so a misspelt flag gets the same
 * sentence from either, before anything is loaded.
 */
export const VERB_FLAGS: ReadonlyMap<string, FlagSpec> = new Map<string, FlagSpec>([
  ["serve", { values: ["--policy", "--http"], switches: ["--allow-unconfined"] }],
  ["explain", { values: ["--policy", "--cwd", "--text"] }],
  ["check", { values: ["--policy", "--http"], switches: ["--allow-unconfined"] }],
  ["permissions", { values: ["--policy", "--transport", "--format", "--http"] }],
  ["systemd", {
    values: ["--policy", "--http", "--transport", "--user-name", "--env-file"],
    switches: ["--user"],
  }],
  ["auth", { values: ["--policy"], switches: ["--json"] }],
  ["audit", {
    values: [
      "--since",
      "--until",
      "--client",
      "--code",
      "--command",
      "-n",
      "--checkpoints",
      "--key",
      "--policy",
    ],
    switches: ["--denied", "--warned", "--json", "--no-color", "-f", "--follow"],
  }],
  ["policy", { values: ["--policy", "--replay", "--commands", "--from"], switches: ["--json"] }],
  ["state", { values: ["--policy"] }],
  ["approvals", { values: ["--policy"], switches: ["--json", "--always"] }],
]);

/** Verbs that read a policy. */
export const POLICY_VERBS: ReadonlySet<string> = new Set([
  "serve",
  "explain",
  "check",
  "permissions",
  "systemd",
  "auth",
  "state",
  "approvals",
]);

/** What the command line asks for, decided before any module is loaded. */
export type CommandLine =
  | { readonly ok: true; readonly action: "help" }
  | { readonly ok: true; readonly action: "version" }
  | {
    readonly ok: true;
    readonly action: "run";
    readonly verb: string;
    /** The arguments the verb's own `run()` receives. */
    readonly verbArgs: readonly string[];
    readonly parsed: ParsedArgs;
  }
  | { readonly ok: false; readonly message: string };

const HELP_WORDS: ReadonlySet<string> = new Set(["--help", "-h", "help"]);
const VERSION_WORDS: ReadonlySet<string> = new Set(["version", "--version", "-V"]);

/**
 * Splits the command line into verb and arguments and checks the verb's flags.
 * `serve` is the default verb, so `htmcp --policy FILE` serves.
 *
 * @param argv Arguments after the program name.
 * @returns `help`/`version`, the verb with its parsed flags, or the one-sentence usage error.
 * @example
 * ```ts
 * parseCommandLine(["--polcy", "p.toml"]);
 * // { ok: false, message: 'Unknown flag "--polcy"; see htmcp --help.' }
 * ```
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const first = argv[0];
  if (first !== undefined && HELP_WORDS.has(first)) return { ok: true, action: "help" };
  if (first !== undefined && VERSION_WORDS.has(first)) return { ok: true, action: "version" };
  const isVerb = first !== undefined && !first.startsWith("-");
  const verb = isVerb ? first : "serve";
  const spec = VERB_FLAGS.get(verb);
  if (spec === undefined) {
    return { ok: false, message: `Unknown command "${verb}"; see htmcp --help.` };
  }
  const verbArgs = isVerb ? argv.slice(1) : argv;
  // `htmcp serve --help` is a request for help, not an unknown flag.
  const beforeRest = verbArgs.indexOf("--") === -1
    ? verbArgs
    : verbArgs.slice(0, verbArgs.indexOf("--"));
  if (beforeRest.some((arg) => arg === "--help" || arg === "-h")) {
    return { ok: true, action: "help" };
  }
  // `auth` and `audit` take a sub-verb first; their flags follow it.
  const flagArgs = verb === "auth" || verb === "policy" || verb === "audit" || verb === "state" ||
      verb === "approvals"
    ? verbArgs.slice(1)
    : verbArgs;
  const parsed = parseArgs(flagArgs, spec);
  if (!parsed.ok) return parsed;
  return { ok: true, action: "run", verb, verbArgs, parsed: parsed.args };
}

/**
 * The sentence for a policy verb given no policy at all: without it the
 * loader would name the first unset key (`jail_root`), which reads as if the
 * policy file were wrong.
 *
 * @param policyFlag The `--policy` value, if given.
 * @param env The process environment (only `HTMCP_POLICY_FILE` and `HTMCP_JAIL_ROOT` are read).
 * @returns The message, or null when a policy source is present.
 */
export function missingPolicyMessage(
  policyFlag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | null {
  if (policyFlag !== undefined) return null;
  if ((env.HTMCP_POLICY_FILE ?? "") !== "" || (env.HTMCP_JAIL_ROOT ?? "") !== "") return null;
  return "No policy given: pass --policy FILE or set HTMCP_POLICY_FILE; see htmcp --help.";
}
