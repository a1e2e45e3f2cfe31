/**
 * `htmcp policy diff`: which commands change verdict between two policies.
 * Each example is judged under both, exactly as `explain_command` would
 * (nothing runs), and only the ones whose code changes are reported, with
 * the reason each policy gave (which names the rule or guard responsible).
 *
 * Examples come from three places, deduplicated by text and cwd: the
 * attempts recorded in an audit log (`--replay`), a file of commands, one per
 * line (`--commands`), and both policies' own `[[tests]]`.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import type { ResultCode } from "../result/codes.ts";
import { checkCommand } from "../tools/check_command.ts";

/** One example command to judge. */
export interface DiffExample {
  /** The command text, judged by both policies as `check_command` would. */
  readonly command: string;
  /** Relative to the jail, or null for the jail root. */
  readonly cwd: string | null;
  /** Where it came from: `replay`, `commands`, `tests`. */
  readonly source: string;
}

/** A command whose verdict differs. */
export interface VerdictChange {
  /** The command whose verdict changed. */
  readonly example: DiffExample;
  /** The old policy's code and sentence. */
  readonly old: { readonly code: ResultCode; readonly reason: string };
  /** The new policy's code and sentence. */
  readonly new: { readonly code: ResultCode; readonly reason: string };
}

/** Bounds on the work of one diff. */
export interface DiffLimits {
  /** Commands judged at most; more is a `RangeError`, never a silently partial diff. */
  readonly maxExamples: number;
  /** Longer audit log lines are skipped by replay and suggestions, bounding one line's work. */
  readonly maxLineBytes: number;
}

/** The bounds in force. */
export const DIFF_LIMITS: DiffLimits = Object.freeze({
  maxExamples: 100_000,
  maxLineBytes: 65_536,
});

/**
 * Commands of an audit log's attempt records (`kind: "attempt"`), with the
 * cwd made relative to `jailRoot` when it was inside it. Unreadable lines
 * are skipped: the log's integrity is `audit verify`'s business.
 *
 * @param text The JSONL log.
 * @param jailRoot The jail the log's cwds are under (the old policy's).
 */
export function examplesFromAuditLog(text: string, jailRoot: string): DiffExample[] {
  const examples: DiffExample[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0 || line.length > DIFF_LIMITS.maxLineBytes) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof record !== "object" || record === null) continue;
    const fields = record as Record<string, unknown>;
    if (fields.kind !== "attempt" || typeof fields.command_raw !== "string") continue;
    const cwd = typeof fields.cwd === "string" ? relativeCwd(fields.cwd, jailRoot) : null;
    examples.push({ command: fields.command_raw, cwd, source: "replay" });
  }
  return examples;
}

function relativeCwd(cwd: string, jailRoot: string): string | null {
  if (cwd === jailRoot) return null;
  if (cwd.startsWith(`${jailRoot}/`)) return cwd.slice(jailRoot.length + 1);
  // A cwd outside the jail was refused anyway; judge it as written.
  return cwd;
}

/** One command per non-empty line; lines starting with `#` are comments. */
export function examplesFromLines(text: string): DiffExample[] {
  return text.split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"))
    .map((command) => ({ command, cwd: null, source: "commands" }));
}

/** Both policies' `[[tests]]` entries as examples. */
export function examplesFromTests(...policies: readonly Policy[]): DiffExample[] {
  return policies.flatMap((policy) =>
    policy.tests.map((test) => ({ command: test.command, cwd: test.cwd, source: "tests" }))
  );
}

async function verdict(policy: Policy, example: DiffExample) {
  const checked = await checkCommand(policy, example.command, example.cwd ?? undefined);
  return { code: checked.ok ? "OK" as const : checked.code, reason: checked.reason };
}

/**
 * Judges every example under both policies and returns those whose code changed.
 *
 * @param oldPolicy The policy in force.
 * @param newPolicy The candidate.
 * @param examples The commands to judge (deduplicated here, first source kept).
 * @returns The changes in example order, and how many examples were judged.
 */
export async function diffPolicies(
  oldPolicy: Policy,
  newPolicy: Policy,
  examples: readonly DiffExample[],
): Promise<{ judged: number; changes: VerdictChange[] }> {
  const seen = new Set<string>();
  const changes: VerdictChange[] = [];
  let judged = 0;
  for (const example of examples) {
    const key = JSON.stringify([example.command, example.cwd]);
    if (seen.has(key)) continue;
    seen.add(key);
    if (++judged > DIFF_LIMITS.maxExamples) {
      throw new RangeError(`policy diff judges at most ${DIFF_LIMITS.maxExamples} commands.`);
    }
    const before = await verdict(oldPolicy, example);
    const after = await verdict(newPolicy, example);
    if (before.code !== after.code) changes.push({ example, old: before, new: after });
  }
  return { judged, changes };
}
