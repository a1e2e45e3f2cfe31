/**
 * The filters of `htmcp audit show|tail|stats`: `--since`, `--until`,
 * `--client`, `--code`, `--command GLOB`, `--denied`, `--warned` (calls an
 * `enforce = "warn"` rule would have refused: they ran, and their attempt's
 * reason says which rule). Every filter given must
 * match (they combine with AND). Bad values are usage errors, never ignored:
 * a misspelt time that silently matched everything would hide the record an
 * operator is looking for.
 *
 * @module
 */
import type { ParsedArgs } from "./args.ts";
import type { CallRow } from "./audit_calls.ts";
import { WARN_RULE_PHRASE } from "../policy/mod.ts";

/** Flags taking a value, for `parseArgs`. */
export const FILTER_VALUES = ["--since", "--until", "--client", "--code", "--command"] as const;
/** Switches, for `parseArgs`. */
export const FILTER_SWITCHES = ["--denied", "--warned"] as const;

export type RowFilter = (row: CallRow) => boolean;

const RELATIVE = /^(\d{1,9})([smhd])$/;
const UNIT_MS: Readonly<Record<string, number>> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };

/**
 * A time flag's value: an ISO 8601 date or date-time (`2026-12-01`,
 * `2026-12-01T09:30:00Z`), or an age before `now` (`90s`, `15m`, `2h`, `7d`).
 */
export function parseTime(value: string, now: number): number | null {
  const relative = RELATIVE.exec(value);
  if (relative !== null) return now - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * A shell-style glob matched against the whole command: `*` any text, `?`
 * one character, `[abc]`/`[!abc]` one of (or none of) a set; anything else
 * is literal.
 */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") source += "[\\s\\S]*";
    else if (c === "?") source += "[\\s\\S]";
    else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) source += "\\[";
      else {
        let set = glob.slice(i + 1, close);
        const negate = set.startsWith("!");
        if (negate) set = set.slice(1);
        source += `[${negate ? "^" : ""}${set.replace(/[\\\]^]/g, "\\$&")}]`;
        i = close;
      }
    } else source += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "u");
}

/**
 * Builds the filter from parsed flags.
 *
 * @returns the filter, or a sentence naming the bad value
 */
export function buildFilter(
  args: ParsedArgs,
  now = Date.now(),
): { ok: true; filter: RowFilter } | { ok: false; message: string } {
  const tests: RowFilter[] = [];
  for (const flag of ["--since", "--until"] as const) {
    const value = args.values.get(flag);
    if (value === undefined) continue;
    const ms = parseTime(value, now);
    if (ms === null) {
      return {
        ok: false,
        message: `${flag} "${value}" is neither an ISO 8601 time nor an age such as 15m, 2h, 7d.`,
      };
    }
    tests.push(
      flag === "--since"
        ? (row) => Date.parse(row.time) >= ms
        : (row) => Date.parse(row.time) <= ms,
    );
  }
  const client = args.values.get("--client");
  if (client !== undefined) tests.push((row) => row.client === client);
  const code = args.values.get("--code");
  if (code !== undefined) {
    const codes = new Set(code.split(",").map((c) => c.trim().toUpperCase()).filter(Boolean));
    tests.push((row) => row.code !== null && codes.has(row.code));
  }
  const command = args.values.get("--command");
  if (command !== undefined) {
    const pattern = globToRegExp(command);
    tests.push((row) => pattern.test(row.command));
  }
  if (args.switches.has("--denied")) tests.push((row) => row.verdict === "deny");
  if (args.switches.has("--warned")) {
    tests.push((row) => !row.explain && row.reason.includes(WARN_RULE_PHRASE));
  }
  return { ok: true, filter: (row) => tests.every((test) => test(row)) };
}
