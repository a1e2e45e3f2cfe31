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
