/**
 * The HS256 signing secret, `state_dir/oauth-jwt-secret`.
 *
 * Created on first start, atomically: the bytes go to a private temporary file
 * that is fsynced and then hard-linked to the final name. `link` fails if the
 * name exists, so when two processes start together exactly one wins and the
 * other reads the winner's secret; nobody ever sees a half-written file.
 *
 * @module
 */
import { join } from "../../path/mod.ts";

/** File name of the secret inside the state directory. */
export const SECRET_FILE = "oauth-jwt-secret";

/** RFC 7518 §3.2: an HS256 key "of the same size as the hash output (256 bits) or larger". */
export const MIN_SECRET_BYTES = 32;

/** The signing key and whether this call created it, or why no usable key exists. */
export type SecretResult =
  | { readonly ok: true; readonly key: Uint8Array; readonly created: boolean }
  | { readonly ok: false; readonly message: string };

/**
 * Reads the secret, creating it when absent.
 *
 * @param stateDir The (existing) state directory.
 * @returns The key bytes, or a sentence explaining why it cannot be used.
 */
export async function loadOrCreateSecret(stateDir: string): Promise<SecretResult> {
  const path = join(stateDir, SECRET_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await readSecret(path);
    if (existing !== "missing") return existing;
    const created = await createSecret(stateDir, path);
    if (created !== "lost-race") return created;
  }
  return { ok: false, message: `Cannot create or read the OAuth secret "${path}".` };
}

async function readSecret(path: string): Promise<SecretResult | "missing"> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "missing";
    return { ok: false, message: `Cannot read the OAuth secret "${path}": ${error}.` };
  }
  if (!info.isFile) {
    // A symlink could point the signing key at any readable file.
    return { ok: false, message: `The OAuth secret "${path}" is not a regular file.` };
  }
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    return {
      ok: false,
      message: `The OAuth secret "${path}" is readable by other users; run chmod 600 on it.`,
    };
  }
  let key: Uint8Array;
  try {
    key = await Deno.readFile(path);
  } catch (error) {
    return { ok: false, message: `Cannot read the OAuth secret "${path}": ${error}.` };
  }
  if (key.byteLength < MIN_SECRET_BYTES) {
    return {
      ok: false,
      message:
        `The OAuth secret "${path}" is ${key.byteLength} bytes; it must have at least ${MIN_SECRET_BYTES}. Delete it to have a new one generated.`,
    };
  }
  return { ok: true, key, created: false };
}

async function createSecret(stateDir: string, path: string): Promise<SecretResult | "lost-race"> {
  const key = crypto.getRandomValues(new Uint8Array(MIN_SECRET_BYTES));
  const suffix = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16))
    .join("");
  const temp = join(stateDir, `.${SECRET_FILE}.${suffix}.tmp`);
  try {
    const file = await Deno.open(temp, { write: true, createNew: true, mode: 0o600 });
    try {
      let written = 0;
      while (written < key.byteLength) written += await file.write(key.subarray(written));
      await file.sync();
    } finally {
      file.close();
    }
    try {
      await Deno.link(temp, path);
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) return "lost-race";
      throw error;
    }
    return { ok: true, key, created: true };
  } catch (error) {
    return { ok: false, message: `Cannot create the OAuth secret "${path}": ${error}.` };
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
}
