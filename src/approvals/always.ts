/**
 * "Always allow this": rules an operator adds with
 * `htmcp approvals allow ID --always`, kept in a file of their own
 * (`[approval] always_allow_file`) that the server reads at startup and never
 * writes.
 *
 * Threats and answers:
 * - The model allowing its own commands forever: no MCP tool writes this
 *   file; the server's permission set reads it and refuses any write grant
 *   over it; it may not lie inside the jail or the state dir, the two places
 *   the model's commands or the server's own records can touch.
 * - Another local user planting rules: the file must be a regular file (not
 *   a symlink, followed or not) that nobody but its owner can write, else the
 *   server refuses to start; a rule it cannot parse stops the start too.
 * - A rule covering more than was approved: a rule is the exact run digest
 *   of the approved command (every stage's path, arguments and environment,
 *   the resolved cwd, the stdin digest), for the same caller and the same
 *   prompt rule; anything else is prompted as before. It only ever exempts
 *   from the prompt: the full judgement runs first, so it never turns a
 *   refusal into an allow.
 *
 * @module
 */
import { dirname } from "../path/mod.ts";
import type { ApprovalBinding } from "./store.ts";
import type { ApprovalRecord } from "./records.ts";
import { ALWAYS_KEYS } from "../config/always_allow.ts";
import type { AlwaysRule } from "../config/types.ts";
import type { AuditLog } from "../audit/mod.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** The server read the always-allow file at startup (absent: no rules). */
    always_allow_loaded: {
      readonly file: string;
      readonly rules: number;
      readonly sha256: string | null;
    };
    /** An always-allow rule exempted this call from its prompt (it was judged in full first). */
    approval_always: {
      readonly call_id: string;
      readonly always_id: string;
      readonly rule: string;
      readonly argv: readonly string[];
      readonly cwd: string;
    };
  }
}

export type { AlwaysRule };

/**
 * The rule that exempts this run from the prompt, or null: the same caller,
 * the same run digest, held by the same prompt rule.
 *
 * @param rules The rules loaded from the always-allow file at startup.
 * @param binding The caller and run digest of the call.
 * @param rule The prompt rule that holds the call.
 *
 * @example
 * ```ts
 * import { findAlwaysRule } from "./mod.ts";
 * const rules = [{
 *   id: "a1", owner: "local", digest: "d1", rule: "git push",
 *   argv: ["/usr/bin/git", "push"], cwd: ".", added_by: "cli:alice", added_ms: 0,
 * }];
 * findAlwaysRule(rules, { owner: "local", digest: "d1" }, "git push"); // the rule
 * findAlwaysRule(rules, { owner: "client:x", digest: "d1" }, "git push"); // null: another caller
 * ```
 */
export function findAlwaysRule(
  rules: readonly AlwaysRule[],
  binding: Pick<ApprovalBinding, "owner" | "digest">,
  rule: string,
): AlwaysRule | null {
  return rules.find((r) =>
    r.owner === binding.owner && r.digest === binding.digest && r.rule === rule
  ) ?? null;
}

/**
 * Audits what the server loaded from the always-allow file, before it
 * serves (the CLI that wrote the file never writes the audit log). Writes
 * nothing when no file is configured.
 *
 * @param settings The policy's `[approval]` settings (`Policy.approval`), or undefined.
 */
export async function auditAlwaysLoaded(
  audit: AuditLog,
  settings: {
    readonly alwaysAllowFile?: string | null;
    readonly alwaysAllow?: readonly AlwaysRule[];
    readonly alwaysAllowSha256?: string | null;
  } | undefined,
): Promise<void> {
  const file = settings?.alwaysAllowFile;
  if (file === undefined || file === null) return;
  await audit.writeEvent("always_allow_loaded", {
    file,
    rules: settings?.alwaysAllow?.length ?? 0,
    sha256: settings?.alwaysAllowSha256 ?? null,
  });
}

/** The rule `--always` adds for an approval record. */
export function alwaysRuleFor(record: ApprovalRecord, by: string, nowMs: number): AlwaysRule {
  return {
    id: record.id,
    owner: record.owner,
    digest: record.digest,
    rule: record.rule,
    argv: record.argv,
    cwd: record.cwd,
    added_by: by,
    added_ms: nowMs,
  };
}

/**
 * Writes `rules` to `path` atomically (a temporary file beside it, fsync,
 * rename), owner-only. It does not judge `path`: the caller loads the file
 * first with `loadAlwaysFile`, which refuses a symlink or an unsafe place as
 * the server would at its next start (the CLI does). The rename replaces a
 * symlink at `path` rather than following it.
 *
 * @throws Deno.errors.AlreadyExists when a file appeared at the temporary
 *   name between its removal and creation (never followed), or any error of
 *   writing in `path`'s folder.
 */
export async function writeAlwaysFile(path: string, rules: readonly AlwaysRule[]): Promise<void> {
  const temp = `${path}.htmcp-tmp`;
  const text = renderRules(rules);
  await Deno.remove(temp).catch(() => {});
  // createNew: a file or symlink planted at the temporary name is not followed.
  const file = await Deno.open(temp, { write: true, createNew: true, mode: 0o600 });
  try {
    await file.write(new TextEncoder().encode(text));
    await file.sync();
  } finally {
    file.close();
  }
  await Deno.rename(temp, path);
}

/** The folder the CLI needs to write in for `--always` (the temporary file lives there). */
export function alwaysFileTemp(path: string): { folder: string; temp: string } {
  return { folder: dirname(path), temp: `${path}.htmcp-tmp` };
}

function renderRules(rules: readonly AlwaysRule[]): string {
  const lines = [
    "# htmcp always-allow rules, written by `htmcp approvals allow ID --always`.",
    "# Each exempts exactly one command (its run digest), for one caller, from one prompt rule.",
    "# The server reads this file at startup only.",
  ];
  for (const rule of rules) {
    lines.push(
      "",
      "[[always]]",
      ...ALWAYS_KEYS.map((key) => `${key} = ${JSON.stringify(rule[key])}`),
    );
  }
  return lines.join("\n") + "\n";
}
