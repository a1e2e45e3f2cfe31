/**
 * `htmcp policy suggest --from AUDIT.jsonl`: what the refused attempts in an
 * audit log say the policy may be missing, grouped with counts, for the
 * operator to review. It prints; it never edits a policy, and no MCP tool
 * reaches it (a model must not be able to widen its own policy by getting
 * refused often enough).
 *
 * Suggestions: commands refused for not being on the allowlist (with sample
 * commands; an interpreter or a denylisted name is marked, never proposed
 * plainly), and the rules and guards that refused most, to review whether
 * they are too broad. Path and cwd escapes are only counted: the answer to
 * them is never a wider policy.
 *
 * @module
 */
import { isInterpreter } from "../policy/mod.ts";
import { DIFF_LIMITS } from "./diff.ts";

/** One group of refusals. */
export interface Suggestion {
  /** `allowlist` (add a command), `review` (a rule or guard refused it), `count` (escapes). */
  readonly kind: "allowlist" | "review" | "count";
  /** The command name, or the rule/guard, or the code. */
  readonly subject: string;
  /** How many refusals in the log fell into this group. */
  readonly count: number;
  /** Up to three example command texts (as logged: already redacted). */
  readonly samples: readonly string[];
  /** What to consider, in one sentence. */
  readonly advice: string;
}

const NOT_ALLOWLISTED = /^Cannot run "([^"]+)": it is not on the allowlist/;
const RULE = /its arguments match the policy rule "([^"]+)"/;
const GUARD = /guard "([^"]+)"/;

interface Group {
  kind: Suggestion["kind"];
  subject: string;
  count: number;
  samples: string[];
}

/**
 * Groups the refused attempts of `logText`.
 *
 * @param logText The audit log (JSONL).
 * @param denylist Names the policy denies (never proposed), lowercase.
 * @returns Suggestions, most frequent first within each kind.
 */
export function suggestFromAuditLog(
  logText: string,
  denylist: ReadonlySet<string> = new Set(),
): Suggestion[] {
  const groups = new Map<string, Group>();
  const bump = (kind: Group["kind"], subject: string, sample: string) => {
    const key = `${kind}\u0000${subject}`;
    const group = groups.get(key) ?? { kind, subject, count: 0, samples: [] };
    group.count++;
    if (group.samples.length < 3 && !group.samples.includes(sample)) group.samples.push(sample);
    groups.set(key, group);
  };
  for (const line of logText.split("\n")) {
    if (line.length === 0 || line.length > DIFF_LIMITS.maxLineBytes) continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (record.kind !== "attempt" || record.verdict !== "deny") continue;
    const command = typeof record.command_raw === "string" ? record.command_raw : "";
    const reason = typeof record.reason === "string" ? record.reason : "";
    const code = typeof record.code === "string" ? record.code : "UNKNOWN";
    const missing = NOT_ALLOWLISTED.exec(reason);
    if (missing !== null) bump("allowlist", missing[1] as string, command);
    else if (RULE.test(reason)) bump("review", `rule "${RULE.exec(reason)?.[1]}"`, command);
    else if (GUARD.test(reason)) bump("review", `guard "${GUARD.exec(reason)?.[1]}"`, command);
    else bump("count", code, command);
  }
  const order = { allowlist: 0, review: 1, count: 2 } as const;
  return [...groups.values()]
    .sort((a, b) => order[a.kind] - order[b.kind] || b.count - a.count)
    .map((group) => Object.freeze({ ...group, advice: adviceFor(group, denylist) }));
}

function adviceFor(group: Group, denylist: ReadonlySet<string>): string {
  if (group.kind === "allowlist") {
    if (denylist.has(group.subject.toLowerCase())) {
      return `"${group.subject}" is denylisted: keep it refused.`;
    }
    if (isInterpreter(group.subject)) {
      return `"${group.subject}" runs any code it is given: allow it only with the kernel ` +
        `sandbox and an argument schema ([commands.${group.subject}]).`;
    }
    return `Consider adding "${group.subject}" to [allowlist] commands, with an argument ` +
      `schema if it has subcommands.`;
  }
  if (group.kind === "review") {
    return `Review whether the ${group.subject} is broader than intended (try enforce = "warn").`;
  }
  return `Refusals with ${group.subject}: the policy is doing its job; no change suggested.`;
}
