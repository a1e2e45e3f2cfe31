/**
 * Where the launcher helper (`htmcp-spawn`, built from `htmcp_spawn.c` by
 * `deno task build-launcher`) lives, and the startup check that the binary
 * about to be trusted with every command is exactly the one our build made
 * from this source.
 *
 * What the hash check defends against: a helper replaced or damaged after the
 * build (a half-written file, a binary copied in from another checkout or
 * branch, an edit outside the build) and a stale helper (the source changed,
 * e.g. after a `git pull`, and nobody rebuilt): either way the server refuses
 * to start instead of running commands through a launcher nobody reviewed.
 * What it does not defend against: someone who can write both the helper and
 * its manifest (or the server's own code) can make them agree; the permission
 * set denies the server itself writes to the folder holding the helper, and
 * the server hashes once at startup, so the operator keeps that folder
 * writable by no one else.
 *
 * @module
 */
import { fromFileUrl } from "../../path/mod.ts";

/**
 * The checkout a bundle was built from: `deno task bundle` writes its build
 * folder here (the bundle's own URL says nothing about where the checkout
 * is), so a bundle runs the helper of the checkout that built it.
 */
const BUNDLED_FROM: string = "<htmcp:bundled-from>";

/** Where a release install puts the helper when the server runs neither from a checkout nor a bundle. */
const INSTALLED_HELPER = "/usr/libexec/htmcp/htmcp-spawn";

function locate(): { helper: string; source: string } {
  // The placeholder is not a path: unbundled. (A test the bundler cannot
  // fold away, unlike a comparison of two literals.)
  if (BUNDLED_FROM.startsWith("/")) return { helper: `${BUNDLED_FROM}/htmcp-spawn`, source: "" };
  const url = new URL(import.meta.url);
  if (url.protocol !== "file:" || !url.pathname.endsWith("/src/exec/spawn/helper.ts")) {
    return { helper: INSTALLED_HELPER, source: "" };
  }
  return {
    helper: fromFileUrl(new URL("../../../build/htmcp-spawn", url)),
    source: fromFileUrl(new URL("./htmcp_spawn.c", url)),
  };
}

const LOCATION = locate();

/**
 * The folder of a bundled program's modules (the bundle's own folder: every
 * chunk of `deno task install`'s code-split bundle, or `dist/htmcp.js`), or
 * "" when running from source. The bundled server imports its chunks as it
 * needs them, which needs read permission on them (`launcherReadPaths`).
 */
export const BUNDLE_FOLDER: string = BUNDLED_FROM.startsWith("/")
  ? fromFileUrl(new URL(".", import.meta.url)).replace(/\/$/, "")
  : "";

/** The C source of the helper, in this repository ("" when not shipped). */
export const HELPER_SOURCE: string = LOCATION.source;

/** Where the build puts the helper binary (`build/htmcp-spawn` in the checkout). */
export const DEFAULT_HELPER_PATH: string = LOCATION.helper;

/** The build's manifest: the SHA-256 of the binary and of the source it was built from. */
export const HELPER_MANIFEST: string = `${DEFAULT_HELPER_PATH}.sha256`;

/** The manifest's content. */
export interface HelperManifest {
  /** Hex SHA-256 of the binary. */
  readonly binary: string;
  /** Hex SHA-256 of `htmcp_spawn.c` when it was built. */
  readonly source: string;
}

/** Hex SHA-256 of `bytes`. */
export async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Parses a manifest; null when it is not one. */
export function parseManifest(text: string): HelperManifest | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const { binary, source } = value as Record<string, unknown>;
  const hex = /^[0-9a-f]{64}$/;
  if (typeof binary !== "string" || !hex.test(binary)) return null;
  if (typeof source !== "string" || !hex.test(source)) return null;
  return { binary, source };
}

/**
 * The result of `verifyHelper`: the binary's hash (shown by `htmcp check`),
 * or one clause saying why the server must not trust it.
 */
export type HelperCheck =
  | { readonly ok: true; readonly sha256: string }
  | { readonly ok: false; readonly detail: string };

const REBUILD = "run `deno task build-launcher`";

async function readOrNull(path: string): Promise<Uint8Array<ArrayBuffer> | null> {
  try {
    return await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Checks that the helper at `path` is byte for byte the binary the build
 * recorded in the manifest, and, where the source is present, that it was
 * built from the source as it is now.
 *
 * @param path The helper the executor will spawn.
 * @param manifestPath The build's manifest.
 * @param sourcePath The helper's C source ("" when not shipped).
 * @returns Its hash, or one clause saying why it cannot be trusted (a
 *   missing, unreadable, altered or stale helper is a value, never a throw).
 *
 * @example
 * ```ts
 * import { DEFAULT_HELPER_PATH, verifyHelper } from "./helper.ts";
 * const checked = await verifyHelper(DEFAULT_HELPER_PATH);
 * if (!checked.ok) throw new Error(`Cannot start: ${checked.detail}.`);
 * ```
 */
export async function verifyHelper(
  path: string,
  manifestPath: string = HELPER_MANIFEST,
  sourcePath: string = HELPER_SOURCE,
): Promise<HelperCheck> {
  try {
    const binary = await readOrNull(path);
    if (binary === null) {
      return { ok: false, detail: `the launcher ${path} is missing (${REBUILD})` };
    }
    const manifestBytes = await readOrNull(manifestPath);
    const manifest = manifestBytes === null
      ? null
      : parseManifest(new TextDecoder().decode(manifestBytes));
    if (manifest === null) {
      return {
        ok: false,
        detail: `the launcher's manifest ${manifestPath} is missing or invalid (${REBUILD})`,
      };
    }
    const actual = await sha256Hex(binary);
    if (actual !== manifest.binary) {
      return {
        ok: false,
        detail:
          `the launcher ${path} has SHA-256 ${actual}, not the ${manifest.binary} its build recorded (${REBUILD})`,
      };
    }
    const source = sourcePath === "" ? null : await readOrNull(sourcePath);
    if (source !== null && (await sha256Hex(source)) !== manifest.source) {
      return {
        ok: false,
        detail: `the launcher ${path} was built from an older ${sourcePath} (${REBUILD})`,
      };
    }
    return { ok: true, sha256: actual };
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) {
      return {
        ok: false,
        detail: `Deno's permissions do not allow reading the launcher ${path} to verify it`,
      };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, detail: `the launcher ${path} could not be verified (${message})` };
  }
}
