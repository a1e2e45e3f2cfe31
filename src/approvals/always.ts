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
import { parse } from "smol-toml";
import { dirname } from "node:path";
import type { ApprovalBinding } from "./store.ts";
import type { ApprovalRecord } from "./records.ts";
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

/** One operator rule: exactly this run, by this caller, under this prompt rule, needs no prompt. */
export interface AlwaysRule {
  /** The approval it was made from. */
  readonly id: string;
  readonly owner: string;
  readonly digest: string;
  /** The prompt rule that held the command (`COMMAND ENTRY`). */
  readonly rule: string;
  /** For the operator's eye: what the rule allows (redacted, as in the approval record). */
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly added_by: string;
  readonly added_ms: number;
}

/** The loaded file: its rules and the SHA-256 of its bytes (for the audit record). */
export interface AlwaysFile {
  readonly rules: readonly AlwaysRule[];
  readonly sha256: string | null;
}

export type AlwaysLoad =
  | { readonly ok: true; readonly file: AlwaysFile }
  | { readonly ok: false; readonly message: string };

const KEYS = ["id", "owner", "digest", "rule", "argv", "cwd", "added_by", "added_ms"] as const;

/**
 * Reads `path` for a server (or the CLI) about to rely on it. An absent
 * file is no rules (the first `--always` creates it); anything else must be
 * a regular, owner-writable-only file outside `forbidden` folders.
 *
 * @param forbidden Folders the file may not be in (the jail, the state dir).
 */
export async function loadAlwaysFile(
  path: string,
  forbidden: readonly string[],
): Promise<AlwaysLoad> {
  const where = checkPlace(path, forbidden);
  if (where !== null) return { ok: false, message: where };
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { ok: true, file: { rules: [], sha256: null } };
    }
    return { ok: false, message: `Cannot read the always-allow file "${path}": ${String(error)}.` };
  }
  const unsafe = unsafeFile(path, info);
  if (unsafe !== null) return { ok: false, message: unsafe };
  // A folder on the way may be a symlink into the jail: judge where it is.
  const real = checkPlace(await Deno.realPath(path), forbidden);
  if (real !== null) return { ok: false, message: real };
  const bytes = await Deno.readFile(path);
  const rules = parseRules(new TextDecoder().decode(bytes), path);
  if (!rules.ok) return rules;
  return { ok: true, file: { rules: rules.rules, sha256: await sha256(bytes) } };
}

/** Why `path` may not hold the always-allow rules, or null. */
function checkPlace(path: string, forbidden: readonly string[]): string | null {
  if (!path.startsWith("/")) {
    return `The always-allow file "${path}" must be an absolute path.`;
  }
  for (const folder of forbidden) {
    if (path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`)) {
      return `The always-allow file "${path}" is inside "${folder}", which the model's commands or the server's own records can touch; keep it in an operator-owned folder such as /etc/htmcp.`;
    }
  }
  return null;
}

/** Why an existing file is not trusted, or null. */
function unsafeFile(path: string, info: Deno.FileInfo): string | null {
  if (info.isSymlink) {
    return `The always-allow file "${path}" is a symlink; name the file itself, owned by the operator.`;
  }
  if (!info.isFile) return `The always-allow file "${path}" is not a regular file.`;
  if (info.mode !== null && (info.mode & 0o022) !== 0) {
    return `The always-allow file "${path}" is writable by users other than its owner; run chmod 600 on it.`;
  }
  return null;
}

function parseRules(
  text: string,
  path: string,
): { ok: true; rules: AlwaysRule[] } | { ok: false; message: string } {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (error) {
    return {
      ok: false,
      message: `The always-allow file "${path}" is not valid TOML: ${
        error instanceof Error ? error.message.split("\n")[0] : String(error)
      }`,
    };
  }
  const extra = Object.keys(doc).find((key) => key !== "always");
  if (extra !== undefined) {
    return { ok: false, message: `The always-allow file "${path}" has an unknown key "${extra}".` };
  }
  const list = doc.always ?? [];
  if (!Array.isArray(list)) {
    return { ok: false, message: `The always-allow file "${path}" must hold [[always]] tables.` };
  }
  const rules: AlwaysRule[] = [];
  for (const [index, entry] of list.entries()) {
    if (!isRule(entry)) {
      return {
        ok: false,
        message: `The always-allow file "${path}" has a malformed [[always]] entry (number ${
          index + 1
        }); each needs exactly ${KEYS.join(", ")}.`,
      };
    }
    rules.push(entry);
  }
  return { ok: true, rules };
}

function isRule(value: unknown): value is AlwaysRule {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  if (Object.keys(r).some((key) => !(KEYS as readonly string[]).includes(key))) return false;
  return typeof r.id === "string" && typeof r.owner === "string" &&
    typeof r.digest === "string" && /^[0-9a-f]{64}$/.test(r.digest) &&
    typeof r.rule === "string" && Array.isArray(r.argv) &&
    r.argv.every((w) => typeof w === "string") && typeof r.cwd === "string" &&
    typeof r.added_by === "string" && Number.isSafeInteger(r.added_ms);
}

/**
 * The rule that exempts this run from the prompt, or null: the same caller,
 * the same run digest, held by the same prompt rule.
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
 * serves (the CLI that wrote the file never writes the audit log).
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
 * rename), owner-only. Refuses a path that is a symlink or otherwise unsafe,
 * as the server would at its next start.
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
      ...KEYS.map((key) => `${key} = ${JSON.stringify(rule[key])}`),
    );
  }
  return lines.join("\n") + "\n";
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
