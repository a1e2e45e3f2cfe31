/**
 * Where the policy's files and folders live: the jail root, and the paths
 * that must stay outside it (audit log, state dir, the child PATH), all
 * compared on real paths.
 *
 * @module
 */
import { dirname, resolve } from "../path/mod.ts";
import type { AuditFailMode } from "./types.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";
import { absolutePath, isInside, realPathForCheck } from "./paths.ts";

/** A path setting and where it came from, for messages and relative resolution. */
export interface PathSetting {
  readonly value: string;
  /** How messages name it: `Policy key "audit_log" (from HTMCP_AUDIT_LOG)`. */
  readonly label: string;
  /** Folder a relative value resolves against. */
  readonly baseDir: string;
}

/**
 * Resolves the jail root to its real path; it must be an existing directory other than `/`.
 *
 * @returns the real path, or a sentence naming the key
 */
export async function resolveJailRoot(setting: PathSetting): Promise<Checked<string>> {
  const absolute = absolutePath(setting.value, setting.baseDir, setting.label);
  if (!absolute.ok) return absolute;
  let real: string;
  try {
    real = await Deno.realPath(absolute.value);
    if (!(await Deno.stat(real)).isDirectory) {
      return fail(`${setting.label} names ${quote(absolute.value)}, which is not a directory.`);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return fail(`${setting.label} names ${quote(absolute.value)}, which does not exist.`);
    }
    const why = error instanceof Error ? error.message : String(error);
    return fail(`${setting.label} names ${quote(absolute.value)}, which cannot be used: ${why}.`);
  }
  if (real === "/") {
    return fail(
      `${setting.label} resolves to "/", the whole filesystem; choose a dedicated folder.`,
    );
  }
  return pass(real);
}

/**
 * Makes `setting` absolute, resolves its real path (symlinks cannot hide an
 * overlap), and refuses it when that lies inside the jail.
 *
 * @param why The end of the refusal sentence: what the model could then do.
 */
async function realPathOutsideJail(
  setting: PathSetting,
  jailRoot: string,
  why: string,
): Promise<Checked<string>> {
  const absolute = absolutePath(setting.value, setting.baseDir, setting.label);
  if (!absolute.ok) return absolute;
  const real = await realPathForCheck(absolute.value, setting.label);
  if (!real.ok) return real;
  if (isInside(jailRoot, real.value)) {
    return fail(
      `${setting.label} names ${quote(real.value)}, which is inside the jail root ${
        quote(jailRoot)
      }, ${why}.`,
    );
  }
  return real;
}

/**
 * Resolves the audit log; it must not be inside the jail (the model must never
 * edit or delete its own trail). Adds a warning when its folder is missing.
 *
 * @returns the real path, or a sentence naming the key
 */
export async function resolveAuditLog(
  setting: PathSetting,
  jailRoot: string,
  failMode: AuditFailMode,
  warnings: string[],
): Promise<Checked<string>> {
  // The model must never be able to edit or delete its own audit trail.
  const real = await realPathOutsideJail(setting, jailRoot, "where the model could rewrite it");
  if (!real.ok) return real;
  const info = await statIfExists(real.value);
  if (info !== null && !info.isFile) {
    return fail(`${setting.label} names ${quote(real.value)}, which is not a regular file.`);
  }
  const folder = await statIfExists(dirname(real.value));
  if (folder === null || !folder.isDirectory) {
    warnings.push(
      `The folder of audit_log ${quote(real.value)} does not exist, so ${
        failMode === "closed"
          ? 'the server cannot open it and will not start (audit_fail_mode is "closed")'
          : "commands will run without an audit record"
      } until it is created.`,
    );
  }
  if (failMode === "open") {
    warnings.push(
      'Policy key "audit_fail_mode" is "open": commands run even when their audit record cannot be written.',
    );
  }
  return pass(real.value);
}

/**
 * Resolves the state dir (never created here); it must not be inside the jail.
 *
 * @returns the real path, or a sentence naming the key
 */
export async function resolveStateDir(
  setting: PathSetting,
  jailRoot: string,
): Promise<Checked<string>> {
  // It holds the OAuth signing secret: a model that reads it mints its own tokens.
  const real = await realPathOutsideJail(
    setting,
    jailRoot,
    "where the model could read the OAuth secret",
  );
  if (!real.ok) return real;
  const info = await statIfExists(real.value);
  if (info !== null && !info.isDirectory) {
    return fail(`${setting.label} names ${quote(real.value)}, which is not a directory.`);
  }
  return pass(real.value);
}

/** Stat that reads "absent" for a missing entry and for one we may not look at. */
async function statIfExists(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

/**
 * Whether a PATH folder is, or may be, inside the jail: its text, and its real
 * path when we are allowed to resolve it (a narrow read grant may forbid that).
 */
export async function mayBeInside(jailRoot: string, dir: string): Promise<boolean> {
  if (isInside(jailRoot, resolve(dir))) return true;
  try {
    return isInside(jailRoot, await Deno.realPath(dir));
  } catch {
    return false;
  }
}
