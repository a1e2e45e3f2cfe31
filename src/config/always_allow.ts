/**
 * `[approval] always_allow_file`: the operator's "always allow this" rules,
 * read once at startup (and by the CLI before it adds one). The file is
 * trusted only as an operator file: a regular file (never a symlink) that
 * nobody but its owner can write, outside the jail and the state dir; an
 * absent file is no rules. Anything else stops the start with a sentence.
 *
 * @module
 */
import { parse } from "smol-toml";
import type { AlwaysRule } from "./types.ts";

/** The loaded file: its rules and the SHA-256 of its bytes (for the audit record). */
export interface AlwaysFile {
  /** The operator's rules, in file order; empty when the file is absent. */
  readonly rules: readonly AlwaysRule[];
  /** Hex SHA-256 of the bytes read, so the audit names the exact file; null when absent. */
  readonly sha256: string | null;
}

/**
 * What `loadAlwaysFile` found: the file, or the one sentence that stops the
 * start (a value, not a throw, like every other startup refusal).
 */
export type AlwaysLoad =
  | { readonly ok: true; readonly file: AlwaysFile }
  | { readonly ok: false; readonly message: string };

export const ALWAYS_KEYS = [
  "id",
  "owner",
  "digest",
  "rule",
  "argv",
  "cwd",
  "added_by",
  "added_ms",
] as const;

/**
 * Reads `path` for a server (or the CLI) about to rely on it. An absent
 * file is no rules (the first `--always` creates it); anything else must be
 * a regular, owner-writable-only file outside `forbidden` folders.
 *
 * @param path The absolute path of the always-allow file.
 * @param forbidden Folders the file may not be in (the jail, the state dir).
 * @returns The rules and the file's hash, or the sentence saying why the
 * file is not trusted or cannot be parsed.
 *
 * @example
 * ```ts
 * import { loadAlwaysFile } from "./always_allow.ts";
 * const dir = await Deno.makeTempDir();
 * const loaded = await loadAlwaysFile(`${dir}/always.toml`, ["/srv/jail"]);
 * if (!loaded.ok) throw new Error(loaded.message);
 * loaded.file.rules.length; // 0: an absent file is no rules
 * ```
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
        }); each needs exactly ${ALWAYS_KEYS.join(", ")}.`,
      };
    }
    rules.push(entry);
  }
  return { ok: true, rules };
}

function isRule(value: unknown): value is AlwaysRule {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  if (Object.keys(r).some((key) => !(ALWAYS_KEYS as readonly string[]).includes(key))) return false;
  return typeof r.id === "string" && typeof r.owner === "string" &&
    typeof r.digest === "string" && /^[0-9a-f]{64}$/.test(r.digest) &&
    typeof r.rule === "string" && Array.isArray(r.argv) &&
    r.argv.every((w) => typeof w === "string") && typeof r.cwd === "string" &&
    typeof r.added_by === "string" && Number.isSafeInteger(r.added_ms);
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
